import http from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';
import type { HttpLimits } from '../config.js';
import { answerProtocolErrors } from './protocol-errors.js';

export interface ServerOptions {
  /** Timeouts and the connection cap (config.ts's HTTP_*, MAX_CONNECTIONS); Node's defaults when absent. */
  limits?: HttpLimits;
  /** Told about each request Node's HTTP layer refused (its status), e.g. for a metric. */
  onProtocolError?: (status: number) => void;
  /** Told when a connection was refused because `limits.maxConnections` are open. */
  onConnectionDropped?: () => void;
}

/**
 * The HTTP server for an app: requests and responses with the app's prototypes (below), what Node's HTTP layer refuses
 * answered with an Error body, and the configured limits for slow and idle clients.
 */
export function createServer(app: Express, options: ServerOptions = {}): http.Server {
  const server = createAppServer(app, options.limits);
  answerProtocolErrors(server, options.onProtocolError);
  const { limits } = options;
  if (limits) {
    server.headersTimeout = limits.headersTimeoutMs;
    server.requestTimeout = limits.requestTimeoutMs;
    // Longer than the load balancer's idle timeout (60 s on common ones), so the balancer, not us, closes idle
    // connections and never sends a request on one we are closing.
    server.keepAliveTimeout = limits.keepAliveTimeoutMs;
    server.maxConnections = limits.maxConnections;
  }
  if (options.onConnectionDropped) server.on('drop', options.onConnectionDropped);
  return server;
}

/**
 * A node:http server for an app, whose requests and responses are created with the app's prototypes from the start:
 * Express's init middleware then finds them in place, instead of calling `Object.setPrototypeOf` on each, which leaves
 * them in V8's slow mode and cost more than every feature of the service together (BENCHMARKS.md, second session).
 */
function createAppServer(app: Express, limits: HttpLimits | undefined): http.Server {
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
      // Timeouts are checked this often (Node's default, 30 s, would let a 10 s header timeout run to 40 s).
      ...(limits && { connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs) }),
    },
    app,
  );
}
