/**
 * A node:http server for an Express app whose requests and responses are created with the app's prototypes from the
 * start. Express's init middleware sets each request's and response's prototype to `app.request` / `app.response`;
 * on an object created otherwise that `Object.setPrototypeOf` leaves it in V8's slow mode, which cost more than every
 * feature of the service together (docs/architecture.md#fast-paths). Set to the prototype it already has, it changes
 * nothing.
 *
 * Rule relied on: `http.createServer` creates requests and responses with the `IncomingMessage` / `ServerResponse`
 * classes given in its options, calling them as constructors with node's own arguments; Express sets exactly
 * `app.request` / `app.response` as their prototypes. The canary (app-prototypes.test.ts) fails if either changes.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';

type ResponseConstructor = (this: http.ServerResponse, req: http.IncomingMessage, options?: unknown) => void;

export function createAppServer(
  app: Express,
  options: http.ServerOptions = {},
  /** What answers each request, when not the app itself (a gate in front of it). */
  listener: http.RequestListener = app,
): http.Server {
  function AppRequest(this: http.IncomingMessage, socket: Socket) {
    http.IncomingMessage.call(this, socket);
  }
  AppRequest.prototype = app.request;
  function AppResponse(this: http.ServerResponse, req: http.IncomingMessage, responseOptions?: unknown) {
    (http.ServerResponse as unknown as ResponseConstructor).call(this, req, responseOptions);
  }
  AppResponse.prototype = app.response;
  return http.createServer(
    {
      ...options,
      IncomingMessage: AppRequest as unknown as typeof http.IncomingMessage,
      ServerResponse: AppResponse as unknown as typeof http.ServerResponse,
    },
    listener,
  );
}
