import { randomUUID } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import type { Logger } from '../logger.js';
import type { Metrics } from '../telemetry/metrics.js';
import { beginRequest, endRequest, routeOf, traceFields } from '../telemetry/request-telemetry.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Request id, security headers, the request's telemetry (metrics, and its SERVER span when tracing is on), and when it
 * is over its log line with the trace ids. One shared `close` listener (no closure per request; `close` also comes for
 * a client that went away before the answer, which `finish` does not); the log line's object is built only when the
 * level logs it.
 */
export function requestContext(logger: Logger, metrics: Metrics): RequestHandler {
  function onClose(this: Response): void {
    const { req } = this;
    const seconds = Number(process.hrtime.bigint() - req.startedAt) / 1e9;
    endRequest(req, this, metrics, seconds);
    if (logger.isLevelEnabled('info')) {
      logger.info(
        {
          reqId: req.id,
          method: req.method,
          route: routeOf(req) ?? 'unmatched',
          status: this.writableFinished ? this.statusCode : 'aborted',
          ms: Math.round(seconds * 1e6) / 1e3,
          ...traceFields(req),
        },
        'request',
      );
    }
  }
  return (req, res, next) => {
    req.startedAt = process.hrtime.bigint();
    const given = req.headers['x-request-id'];
    req.id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader('X-Request-Id', req.id);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Frame-Options', 'DENY');
    res.on('close', onClose);
    beginRequest(req, metrics, next);
  };
}
