import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { errorBody, type ErrorCode } from '@animal-store/contract';
import { responseInFlight } from '../fast-path/response-in-flight.js';

/** What Node's HTTP parser and timers refuse before any route runs, as our codes. */
function codeFor(err: NodeJS.ErrnoException): { code: ErrorCode; message: string } {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        code: 'request_header_fields_too_large',
        message: 'Request headers are too large (at most 16 KiB in total)',
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: 'request_timeout', message: 'The request was not received in time' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { code: 'invalid_request', message: 'Chunk extensions are too large' };
    default:
      return { code: 'invalid_request', message: 'Malformed HTTP request' };
  }
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/**
 * Answers what Node's HTTP layer refuses (malformed requests, oversized headers, header and request timeouts) with the
 * Error body every other error has, instead of Node's bodiless default, then closes the connection. As Node does, it
 * writes only when no answer has started on the socket; a reset by the client is just closed.
 */
export function answerProtocolErrors(server: Server, onError?: (status: number) => void): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const inFlight = responseInFlight(socket);
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const { code, message } = codeFor(err);
    const error = errorBody(code, message);
    const body = JSON.stringify(error);
    const { status } = error;
    onError?.(status);
    socket.end(
      `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
