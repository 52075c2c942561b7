/**
 * HTTP/1.1 over raw `net` sockets for the open-loop generator (load-open.ts): requests are encoded to bytes once, and
 * of each answer only the status line and `Content-Length` are read (the body is counted, never decoded or copied).
 * node:http's client costs several times a request's bytes in CPU (its agent, parser, header objects and streams),
 * which made one CPU of generators unable to offer 4x a server's capacity; this costs a write and a scan of the head.
 * The servers under test always send `Content-Length` (Express's JSON and the shed and door answers); an answer
 * without one ends the connection as a failure rather than being misread.
 */
import net from 'node:net';
import type { LoadRequest } from './load-spec.js';

/** A request's bytes: `keepAlive` false asks the server to close the connection after answering. */
export function encodeRequest(host: string, r: LoadRequest, keepAlive = true): Buffer {
  let head = `${r.method} ${r.path} HTTP/1.1\r\nHost: ${host}\r\n`;
  for (const [name, value] of Object.entries(r.headers ?? {})) head += `${name}: ${value}\r\n`;
  if (r.body !== undefined) head += `Content-Length: ${Buffer.byteLength(r.body)}\r\n`;
  if (!keepAlive) head += 'Connection: close\r\n';
  return Buffer.from(`${head}\r\n${r.body ?? ''}`);
}

const HEAD_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = /\r\ncontent-length:[ \t]*(\d+)/i;

/**
 * One keep-alive connection carrying one request at a time. `onAnswer` hears each answer's status, `onFail` a
 * connection that failed or closed with a request unanswered (or answered in a way this reader does not parse); the
 * connection is unusable after that.
 */
export class RawConnection {
  readonly #socket: net.Socket;
  /** Bytes of a head not yet complete. */
  #head: Buffer | undefined;
  /** Body bytes still to come of the current answer; -1 while its head is being read. */
  #bodyLeft = -1;
  #status = 0;
  #waiting = false;
  #dead = false;

  constructor(
    port: number,
    host: string,
    private readonly onAnswer: (status: number) => void,
    private readonly onFail: () => void,
  ) {
    this.#socket = net.connect({ port, host, noDelay: true });
    this.#socket.on('data', (chunk: Buffer) => this.#read(chunk));
    this.#socket.on('error', () => this.#fail());
    this.#socket.on('close', () => this.#fail());
  }

  get dead(): boolean {
    return this.#dead;
  }

  /** Writes a request (bytes as encodeRequest made them); its answer comes to onAnswer. */
  send(bytes: Buffer): void {
    this.#waiting = true;
    this.#socket.write(bytes);
  }

  destroy(): void {
    this.#dead = true;
    this.#socket.destroy();
  }

  #fail(): void {
    if (this.#dead) return;
    this.#dead = true;
    this.#socket.destroy();
    if (this.#waiting) {
      this.#waiting = false;
      this.onFail();
    }
  }

  #read(chunk: Buffer): void {
    if (this.#bodyLeft >= 0) return this.#body(chunk);
    const data = this.#head ? Buffer.concat([this.#head, chunk]) : chunk;
    const end = data.indexOf(HEAD_END);
    if (end === -1) {
      this.#head = data;
      return;
    }
    this.#head = undefined;
    const head = data.toString('latin1', 0, end + 2);
    const length = CONTENT_LENGTH.exec(head);
    if (!head.startsWith('HTTP/1.') || length === null) return this.#fail();
    this.#status = Number(head.slice(9, 12));
    this.#bodyLeft = Number(length[1]);
    this.#body(data.subarray(end + 4));
  }

  #body(chunk: Buffer): void {
    this.#bodyLeft -= chunk.length;
    if (this.#bodyLeft > 0) return;
    // No pipelining: nothing may follow the body of the one answer awaited.
    if (this.#bodyLeft < 0 || !this.#waiting) return this.#fail();
    this.#waiting = false;
    this.#bodyLeft = -1;
    this.onAnswer(this.#status);
  }
}
