import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express } from 'express';
import type { Config } from '../config/load.js';
import { notFound } from '../http/error-handler.js';
import { mountOperations, type OperationsOptions } from '../http/operations.js';
import { createServer } from '../http/server.js';
import type { Admission } from '../overload/admission.js';
import { startLiveness } from '../overload/liveness.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../telemetry/metrics.js';
import { cpuWarning, RECOMMENDED_CPUS, usableCpus } from './cpus.js';

/** Serves `app` on the configured address and limits; a server that cannot listen ends the process. */
export function listen(
  app: Express,
  config: Config,
  context: { logger: Logger; metrics: Metrics; database: string; admission?: Admission | undefined },
): Server {
  const { logger, metrics } = context;
  // One line per burst when the connection cap is reached (not one per refused connection), and a counter.
  let lastDropLog = 0;
  const server: Server = createServer(app, {
    limits: config.http,
    admission: context.admission,
    onProtocolError: (status, reason) => {
      metrics.protocolErrors.inc({ http_response_status_code: status });
      logger.info({ status, reason }, 'request refused before routing');
    },
    onConnectionDropped: () => {
      metrics.droppedConnections.inc();
      if (Date.now() - lastDropLog < 10_000) return;
      lastDropLog = Date.now();
      logger.warn({ maxConnections: config.http.maxConnections }, 'connection limit reached: refusing new connections');
    },
  }).listen(config.port, config.host, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const rateLimitStore = config.redisClusterNodes ? 'redis-cluster' : config.redisUrl ? 'redis' : 'memory';
    const cpus = usableCpus();
    // Before the line that says it listens, which those who start it wait for: they have both then.
    const warning = cpuWarning(cpus);
    if (warning !== undefined) logger.warn({ cpus, recommended: RECOMMENDED_CPUS }, warning);
    logger.info(
      { port, host: config.host, database: context.database, rateLimitStore, cpus },
      `listening on http://${config.host}:${port}`,
    );
  });
  exitWhenCannotListen(server, logger);
  return server;
}

/**
 * OPS_PORT: /healthz, /readyz and /metrics on a listener of their own. A flood of API connections fills the API port's
 * listen queue, which the process empties one connection per event-loop turn (docs/overload.md); probes queued behind
 * it would wait for the flood to end. Here they queue only behind other probes, and nothing is shed. The port is
 * served by a thread of its own (overload/liveness.ts): /healthz answers from the main loop's heartbeat, at once
 * whatever the load, and 503 once the main loop is wedged (LIVENESS_STALL_MS); the rest goes to the main thread's
 * listener of them on 127.0.0.1.
 */
export async function listenOps(config: Config, options: OperationsOptions): Promise<void> {
  const app = express();
  app.disable('x-powered-by');
  mountOperations(app, { ...options, metricsToken: config.metricsToken });
  app.use(notFound);
  const inner = createServer(app, { limits: config.http });
  exitWhenCannotListen(inner, options.logger);
  await new Promise<void>((resolve) => inner.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = await startLiveness({
      port: config.opsPort ?? 0,
      host: config.host,
      upstreamPort: (inner.address() as AddressInfo).port,
      stallMs: config.livenessStallMs,
      headersTimeoutMs: config.http.headersTimeoutMs,
      requestTimeoutMs: config.http.requestTimeoutMs,
    });
    options.logger.info({ port, host: config.host }, 'operations (/healthz, /readyz, /metrics) listening');
  } catch (err) {
    options.logger.fatal({ err: (err as Error).message }, 'cannot listen');
    process.exit(1);
  }
}

function exitWhenCannotListen(server: Server, logger: Logger): void {
  server.on('error', (err) => {
    logger.fatal({ err: err.message }, 'cannot listen');
    process.exit(1);
  });
}
