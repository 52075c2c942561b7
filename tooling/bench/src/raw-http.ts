/**
 * HTTP/1.1 over raw `net` sockets for the open-loop generator (load-open.ts): requests are encoded to bytes once, and
 * of each answer only the status line and its body's length are read (the body is counted, never decoded or copied).
 * node:http's client costs several times a request's bytes in CPU (its agent, parser, header objects and streams),
 * which made one CPU of generators unable to offer 4x a server's capacity; this costs a write and a scan of the head.
 * A body comes with `Content-Length` (Express's JSON, the shed answer) or chunked (an answer written without a length:
 * the door's held 429s); an answer with neither ends the connection as a failure (`unparsed`) rather than being
 * misread.
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
const CRLF = Buffer.from('\r\n');
const CONTENT_LENGTH = /\r\ncontent-length:[ \t]*(\d+)/i;
const CHUNKED = /\r\ntransfer-encoding:[^\r]*chunked/i;

/**
 * Why a connection failed with a request unanswered: the server closed it (`closed`), it failed (`error`: refused,
 * reset), or its answer was not HTTP/1.1 as this reader reads it (`unparsed`).
 */
export type RawFailure = 'closed' | 'error' | 'unparsed';

/**
 * One keep-alive connection carrying one request at a time. `onAnswer` hears each answer's status, `onFail` a
 * connection that failed or closed with a request unanswered (or answered in a way this reader does not parse), and
 * how; the connection is unusable after that.
 */
export class RawConnection {
  readonly #socket: net.Socket;
  /** Bytes of a head, a chunk-size line or a trailer not yet complete. */
  #partial: Buffer | undefined;
  /**
   * What the next bytes are: the head of an answer, `length` bytes of a body (#left to come), or a chunked body:
   * a chunk-size line (`size`), a chunk's data and its CRLF (#left to come), or the trailers after the last chunk.
   */
  #state: 'head' | 'length' | 'size' | 'chunk' | 'trailer' = 'head';
  #left = 0;
  #status = 0;
  #waiting = false;
  #dead = false;

  constructor(
    port: number,
    host: string,
    private readonly onAnswer: (status: number) => void,
    private readonly onFail: (why: RawFailure) => void,
  ) {
    this.#socket = net.connect({ port, host, noDelay: true });
    this.#socket.on('data', (chunk: Buffer) => this.#read(chunk));
    this.#socket.on('error', () => this.#fail('error'));
    this.#socket.on('close', () => this.#fail('closed'));
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

  #fail(why: RawFailure): void {
    if (this.#dead) return;
    this.#dead = true;
    this.#socket.destroy();
    if (this.#waiting) {
      this.#waiting = false;
      this.onFail(why);
    }
  }

  #read(chunk: Buffer): void {
    let data = this.#partial ? Buffer.concat([this.#partial, chunk]) : chunk;
    this.#partial = undefined;
    for (;;) {
      if (this.#dead) return;
      if (this.#state === 'length' || this.#state === 'chunk') {
        const taken = Math.min(this.#left, data.length);
        this.#left -= taken;
        data = data.subarray(taken);
        if (this.#left > 0) return;
        if (this.#state === 'length') return this.#answered(data);
        this.#state = 'size';
        continue;
      }
      if (data.length === 0) return;
      const end = data.indexOf(this.#state === 'head' ? HEAD_END : CRLF);
      if (end === -1) {
        this.#partial = data;
        return;
      }
      const rest = data.subarray(end + (this.#state === 'head' ? 4 : 2));
      if (this.#state === 'head') this.#head(data.toString('latin1', 0, end + 2));
      else if (this.#state === 'size') this.#chunkSize(data.toString('latin1', 0, end));
      // An empty line ends the trailers, and the answer.
      else if (end === 0) return this.#answered(rest);
      data = rest;
    }
  }

  /** The head of an answer: its status, then a body of `Content-Length` bytes or chunked. */
  #head(head: string): void {
    if (!head.startsWith('HTTP/1.')) return this.#fail('unparsed');
    this.#status = Number(head.slice(9, 12));
    if (CHUNKED.test(head)) {
      this.#state = 'size';
      return;
    }
    const length = CONTENT_LENGTH.exec(head);
    // 204 and 304 have no body, whatever their head says (RFC 9112 section 6.3).
    const none = this.#status === 204 || this.#status === 304;
    if (length === null && !none) return this.#fail('unparsed');
    this.#state = 'length';
    this.#left = none ? 0 : Number(length![1]);
  }

  /** A chunk-size line (hex, extensions after `;` ignored): the chunk's data and CRLF follow; size 0 is the last. */
  #chunkSize(line: string): void {
    const size = parseInt(line, 16);
    if (!Number.isInteger(size) || size < 0) return this.#fail('unparsed');
    if (size === 0) this.#state = 'trailer';
    else [this.#state, this.#left] = ['chunk', size + 2];
  }

  /** The answer's last byte came; `rest` is what followed it. */
  #answered(rest: Buffer): void {
    // No pipelining: nothing may follow the one answer awaited.
    if (rest.length > 0 || !this.#waiting) return this.#fail('unparsed');
    this.#waiting = false;
    this.#state = 'head';
    this.onAnswer(this.#status);
  }
}
