import type { Express } from 'express';
import type { Database } from '../db/types.js';
import { briefly } from '../errors/brief.js';
import type { Logger } from '../logger.js';
import { expose } from '../telemetry/exposition.js';
import type { Metrics } from '../telemetry/metrics.js';
import { RETRY_AFTER_SECONDS, SHUTTING_DOWN_RETRY_AFTER_SECONDS } from '../errors/dependency-reasons.js';
import { repeatedAuthorizationError, secretCredential, WWW_AUTHENTICATE } from './auth.js';
import { sendError } from './error-handler.js';

export interface OperationsOptions {
  db: Pick<Database, 'ping'>;
  logger: Logger;
  metrics: Metrics;
  /** When set, /metrics wants `Authorization: Bearer <token>`. */
  metricsToken?: string | undefined;
  /** True once shutdown began: /readyz answers 503 so load balancers stop sending traffic. */
  isShuttingDown?: (() => boolean) | undefined;
}

/**
 * `/healthz` (the process lives), `/readyz` (the database answers, not shutting down; its answers feed the readiness
 * metrics) and `/metrics` (OpenMetrics or Prometheus text).
 */
export function mountOperations(app: Express, options: OperationsOptions): void {
  const { db, logger, metrics, metricsToken, isShuttingDown } = options;
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', (req, res) => {
    if (isShuttingDown?.()) {
      metrics.readiness(false);
      sendError(res, 'service_unavailable', 'Shutting down', {
        'Retry-After': String(SHUTTING_DOWN_RETRY_AFTER_SECONDS),
      });
      return;
    }
    db.ping().then(
      () => {
        metrics.readiness(true);
        res.json({ status: 'ready' });
      },
      (err: unknown) => {
        metrics.readiness(false);
        logger.warn({ reqId: req.id, ...briefly(err) }, 'readiness check failed: database unreachable');
        sendError(res, 'service_unavailable', 'Database unreachable', {
          'Retry-After': String(RETRY_AFTER_SECONDS.database_unreachable),
        });
      },
    );
  });
  app.get('/metrics', (req, res, next) => {
    const credential = metricsToken ? secretCredential(req, metricsToken) : 'valid';
    if (credential === 'repeated') {
      next(repeatedAuthorizationError());
      return;
    }
    if (credential === 'invalid') {
      sendError(res, 'unauthorized', 'Metrics need Authorization: Bearer <METRICS_TOKEN>', WWW_AUTHENTICATE);
      return;
    }
    // Sent as is: Express's send would rewrite the content type's parameters, which scrapers match exactly.
    expose(metrics.registry, req.headers.accept).then(({ contentType, body }) => {
      res.setHeader('Content-Type', contentType);
      res.end(body);
    }, next);
  });
}
