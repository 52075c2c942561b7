import http from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';

/**
 * The HTTP server for an app, whose requests and responses are created with the app's prototypes from the start:
 * Express's init middleware then finds them in place, instead of calling `Object.setPrototypeOf` on each, which leaves
 * them in V8's slow mode and cost more than every feature of the service together (BENCHMARKS.md, second session).
 */
export function createServer(app: Express): http.Server {
  function AppRequest(this: http.IncomingMessage, socket: Socket) {
    http.IncomingMessage.call(this, socket);
  }
  AppRequest.prototype = app.request;
  function AppResponse(this: http.ServerResponse, req: http.IncomingMessage, options?: unknown) {
    (
      http.ServerResponse as unknown as (
        this: http.ServerResponse,
        req: http.IncomingMessage,
        options?: unknown,
      ) => void
    ).call(this, req, options);
  }
  AppResponse.prototype = app.response;
  return http.createServer(
    {
      IncomingMessage: AppRequest as unknown as typeof http.IncomingMessage,
      ServerResponse: AppResponse as unknown as typeof http.ServerResponse,
    },
    app,
  );
}
