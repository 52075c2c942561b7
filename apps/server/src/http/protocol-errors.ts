import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { errorBody, type ErrorCode } from '@animal-store/contract';
import { responseInFlight } from '../fast-path/response-in-flight.js';

/**
 * After the answer that closes a connection, how long the peer may take to read it before the socket is destroyed.
 * Ending only our side would leave the connection open for as long as the peer keeps its own side open (the server in
 * FIN-WAIT-2), counted against MAX_CONNECTIONS past every timeout; destroying at once could reset the connection
 * before the answer is read.
 */
export const CLOSE_GRACE_MS = 1000;

/** Why a request was refused before any route ran: the log line's `reason`. */
export type ProtocolRefusal =
  'malformed' | 'headers_too_large' | 'request_timeout' | 'missing_host' | 'unsupported_expectation' | 'connect';

/** Told about each request refused before routing: the metric and the log line. */
export type ProtocolErrorListener = (status: number, reason: ProtocolRefusal) => void;

interface Refusal {
  code: ErrorCode;
  message: string;
  reason: ProtocolRefusal;
}

/** What Node's HTTP parser and timers refuse before any route runs, as our codes. */
function refusalFor(err: NodeJS.ErrnoException): Refusal {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        code: 'request_header_fields_too_large',
        message: 'Request headers are too large (at most 16 KiB in total)',
        reason: 'headers_too_large',
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: 'request_timeout', message: 'The request was not received in time', reason: 'request_timeout' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { code: 'invalid_request', message: 'Chunk extensions are too large', reason: 'malformed' };
    default:
      return { code: 'invalid_request', message: 'Malformed HTTP request', reason: 'malformed' };
  }
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

function errorResponse({ code, message }: Refusal): { status: number; head: string; body: string } {
  const error = errorBody(code, message);
  const body = JSON.stringify(error);
  const head =
    `HTTP/1.1 ${error.status} ${REASONS[error.status] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
  return { status: error.status, head, body };
}

/**
 * Ends a connection (after `data`, when given) and destroys it CLOSE_GRACE_MS later whatever the peer does, so no
 * connection outlives its last answer by more than that.
 */
export function closeConnection(socket: Socket, data?: string): void {
  const timer = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  if (data === undefined) socket.end();
  else socket.end(data);
}

/**
 * Runs `then` once the answers in flight to requests received whole before the refused one (pipelined) are sent, so
 * a committed create is never left unanswered by the refusal that follows it. An answer in flight to a request still
 * arriving is the refused request's own (a timeout): `then` runs at once.
 */
function whenAnswered(socket: Socket, then: () => void): void {
  const inFlight = responseInFlight(socket) as ServerResponse | null | undefined;
  if (!inFlight || inFlight.writableFinished || !inFlight.req.complete) {
    then();
    return;
  }
  let waited = false;
  const next = () => {
    if (waited) return;
    waited = true;
    setImmediate(() => whenAnswered(socket, then));
  };
  // `close` too: an answer that never finishes (the client went away) must not hold the refusal forever.
  inFlight.once('finish', next).once('close', next);
}

/**
 * Answers what Node's HTTP layer refuses (malformed requests, oversized headers, header and request timeouts, CONNECT)
 * with the Error body every other error has, instead of Node's bodiless default, then closes the connection. It answers
 * after the answers in flight on the connection, once; a reset by the client is just closed. A request already
 * answered (an early 401, 404 or 415) whose body then stops arriving gets no second answer: one request, one answer.
 */
export function answerProtocolErrors(server: Server, onError?: ProtocolErrorListener): void {
  const lastResponse = new WeakMap<Socket, ServerResponse>();
  const refusing = new WeakSet<Socket>();
  // Only an answer still going out, or one sent before its request's body was all read, decides anything below: once
  // both are done the entry goes, so an idle keep-alive connection does not hold its last request and response (with
  // all they refer to) until its next request, which made them outlive young-generation collections.
  function finished(this: ServerResponse) {
    const socket = this.req.socket;
    // A pipelined request may already have put its own response in the entry.
    if (this.req.complete && lastResponse.get(socket) === this) lastResponse.delete(socket);
  }
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    lastResponse.set(req.socket, res);
    res.once('finish', finished);
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    // Bytes after the first error make the parser fail again: the connection is refused once.
    if (refusing.has(socket)) return;
    refusing.add(socket);
    whenAnswered(socket, () => {
      const answered = lastResponse.get(socket);
      const own = responseInFlight(socket);
      // Its answer already started, or already sent (an early 401 whose body stopped coming): no second answer.
      if (!socket.writable || own?.headersSent || (answered?.writableFinished && !answered.req.complete)) {
        closeConnection(socket);
        return;
      }
      const refusal = refusalFor(err);
      const { status, head, body } = errorResponse(refusal);
      onError?.(status, refusal.reason);
      closeConnection(socket, head + body);
    });
  });
  // Not a proxy: Node would close a CONNECT without a word.
  server.on('connect', (_req: IncomingMessage, socket: Socket) => {
    const { status, head, body } = errorResponse({
      code: 'invalid_request',
      message: 'CONNECT is not supported: this server is not a proxy',
      reason: 'connect',
    });
    onError?.(status, 'connect');
    closeConnection(socket, head + body);
  });
  // An `Expect` other than 100-continue (Node's bodiless 417): refused before authentication, as Node would.
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    refuse(res, {
      code: 'invalid_request',
      message: 'Unsupported Expect header: only 100-continue is supported',
      reason: 'unsupported_expectation',
    });
    onError?.(400, 'unsupported_expectation');
  });
}

function refuse(res: ServerResponse, refusal: Refusal): void {
  const error = errorBody(refusal.code, refusal.message);
  const body = JSON.stringify(error);
  res.writeHead(error.status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  res.end(body);
}

/**
 * An HTTP/1.1 request without `Host` (RFC 9112 section 3.2), which Node would answer with a bodiless 400 (the server is
 * created with `requireHostHeader: false` so that it is answered here); true when it was refused.
 */
export function refuseMissingHost(req: IncomingMessage, res: ServerResponse, onError?: ProtocolErrorListener): boolean {
  if (req.headers.host !== undefined || req.httpVersion !== '1.1') return false;
  refuse(res, { code: 'invalid_request', message: 'The Host header is required', reason: 'missing_host' });
  onError?.(400, 'missing_host');
  return true;
}
