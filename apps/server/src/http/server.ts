import type http from 'node:http';
import type { Express } from 'express';
import type { HttpLimits } from '../config/load.js';
import { createAppServer } from '../fast-path/app-prototypes.js';
import type { Admission } from '../overload/admission.js';
import { answerProtocolErrors, refuseMissingHost, type ProtocolErrorListener } from './protocol-errors.js';

export interface ServerOptions {
  /** Timeouts and the connection cap (config's HTTP_*, MAX_CONNECTIONS); Node's defaults when absent. */
  limits?: HttpLimits;
  /** Told about each request refused before routing (its status and why), for the metric and the log. */
  onProtocolError?: ProtocolErrorListener;
  /** Told when a connection was refused because `limits.maxConnections` are open. */
  onConnectionDropped?: () => void;
  /** Load shedding's gate, run on each request before the app (overload/admission.ts). */
  admission?: Pick<Admission, 'admit'> | undefined;
}

/**
 * The HTTP server for an app: requests and responses with the app's prototypes (fast-path/app-prototypes.ts), what
 * Node's HTTP layer refuses answered with an Error body, and the configured limits for slow and idle clients.
 */
export function createServer(app: Express, options: ServerOptions = {}): http.Server {
  const { limits, admission, onProtocolError } = options;
  const server = createAppServer(
    app,
    {
      // A request without Host is refused by refuseMissingHost, with an Error body (Node's own 400 has none).
      requireHostHeader: false,
      // Timeouts are checked this often (Node's default, 30 s, would let a 10 s header timeout run to 40 s).
      ...(limits ? { connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs) } : {}),
    },
    (req, res) => {
      if (refuseMissingHost(req, res, onProtocolError)) return;
      if (admission && !admission.admit(req, res)) return;
      void app(req, res);
    },
  );
  answerProtocolErrors(server, onProtocolError);
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
