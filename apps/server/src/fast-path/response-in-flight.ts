/**
 * The response in progress on a socket, for answering what Node's HTTP parser refuses only when no answer has started
 * (as Node itself does).
 *
 * Rule relied on: node:http keeps the response being written on a connection in the socket's `_httpMessage` (a
 * private field Node's own `clientError` default reads for the same purpose). The canary (response-in-flight.test.ts)
 * fails if Node stops setting it.
 */
import type { Socket } from 'node:net';

export function responseInFlight(socket: Socket): { headersSent?: boolean } | null | undefined {
  return (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
}
