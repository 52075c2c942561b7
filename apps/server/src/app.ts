import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { contract } from '@animal-store/contract';
import { createMemoryStore, type RateLimitStore } from '@animal-store/rate-limit';
import { createExpressEndpoints } from '@ts-rest/express';
import express, { type Express, type RequestHandler, type Response } from 'express';
import type { Database } from './db/types.js';
import { mountAdminApi } from './http/admin.js';
import { bearerMatches, requireApiKey, requireScope, resolveApiKey, WWW_AUTHENTICATE } from './http/auth.js';
import { jsonBody } from './http/body.js';
import { installIfNoneMatch } from './http/conditional.js';
import { installLeanJson } from './http/respond.js';
import { allowedMethods, errorHandler, methodNotAllowed, notFound, sendError } from './http/errors.js';
import { briefly } from './http/dependency-errors.js';
import { docsRouter } from './http/docs.js';
import { deprecationHeaders, petsRouter } from './http/pets.js';
import { validationError } from './http/validation.js';
import { KeyAdmin } from './keys/admin.js';
import { LAST_USED_FLUSH_MS, LastUsedRecorder } from './keys/last-used.js';
import { KeyResolver } from './keys/resolver.js';
import type { Logger } from './logger.js';
import { Metrics } from './metrics.js';
import { createAdminRateLimiting, createRateLimiting } from './rate-limiting.js';
import type { TrustProxy } from './trust-proxy.js';

export interface AppDeps {
  db: Database;
  logger: Logger;
  /** How long key lookups are cached in-process (ms). */
  keyCacheTtlMs?: number;
  /**
   * Rate limiting of /v1 (X-RateLimit-* on every answer): the store of counters and bans, and the ban rule.
   * Default: an in-memory store (the embedded default) with a ban after 10 refusals in a minute, for 900 s.
   */
  rateLimit?: { store: RateLimitStore; banThreshold?: number; banSeconds?: number };
  /**
   * Express's `trust proxy` for the client address of keyless limits: false (the socket's address), a number of proxy
   * hops, or trusted proxy addresses/CIDRs (config's TRUST_PROXY). `true` means one hop, never "trust every hop".
   */
  trustProxy?: TrustProxy | true;
  /** Validate every response against the contract (tests); costs time, so off in production. */
  validateResponses?: boolean;
  /** Clock for the key cache, key expiry, last use and admin actions (tests). */
  now?: () => number;
  /** Records each key's last use (main.ts closes it at shutdown, which writes what is left). Default: one per app. */
  lastUsed?: LastUsedRecorder;
  /** Enables the admin API (`/admin/v1`); without it every admin route answers 404. */
  adminToken?: string | undefined;
  /** Prometheus metrics served at /metrics (created when absent). */
  metrics?: Metrics;
  /** When set, /metrics wants `Authorization: Bearer <token>`. */
  metricsToken?: string | undefined;
  /** True once shutdown began: /readyz answers 503 so load balancers stop sending traffic. */
  isShuttingDown?: () => boolean;
}

/** The OpenAPI document the contract package generated at its build (served as is, not generated again here). */
const OPENAPI_JSON = readFileSync(
  createRequire(import.meta.url).resolve('@animal-store/contract/openapi.json'),
  'utf8',
);

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Request id, security headers, and on finish the request's metrics and log line. One shared `finish` listener (no
 * closure per request); the log line's object is built only when the level logs it.
 */
function requestContext(logger: Logger, metrics: Metrics): RequestHandler {
  function onFinish(this: Response): void {
    const { req } = this;
    const seconds = Number(process.hrtime.bigint() - req.startedAt) / 1e9;
    // Label by route pattern, never by raw path, so the label set stays bounded.
    const route = req.route ? `${req.baseUrl}${String((req.route as { path: unknown }).path)}` : 'unmatched';
    metrics.requests.inc({ route, method: req.method, status: this.statusCode });
    metrics.latency.observe({ route, method: req.method }, seconds);
    if (logger.isLevelEnabled('info')) {
      logger.info(
        { reqId: req.id, method: req.method, route, status: this.statusCode, ms: Math.round(seconds * 1e6) / 1e3 },
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
    res.on('finish', onFinish);
    next();
  };
}

/** Builds the Express app from explicit dependencies. Listening is main.ts's job. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  // Strong ETags on 2xx GET answers, and If-None-Match answered 304 with no body, every other header kept: JSON answers
  // through installLeanJson, anything else through Express's send with the same rule for freshness.
  app.set('etag', 'strong');
  installIfNoneMatch(app);
  installLeanJson(app);
  app.set('trust proxy', deps.trustProxy === true ? 1 : (deps.trustProxy ?? false));

  const now = deps.now ?? Date.now;
  const keys = new KeyResolver(deps.db.apiKeys, deps.keyCacheTtlMs ?? 5000, now);
  // A key changed anywhere (this process or another replica): forget every cached lookup at once.
  deps.db.keyChanges.subscribe(() => keys.clear());
  const lastUsed =
    deps.lastUsed ??
    new LastUsedRecorder(deps.db.apiKeys, {
      intervalMs: LAST_USED_FLUSH_MS,
      now,
      onError: (err) =>
        deps.logger.warn({ err: (err as Error).message }, 'could not record when keys were last used; retrying'),
    });
  const limits = {
    store: deps.rateLimit?.store ?? createMemoryStore(),
    banThreshold: deps.rateLimit?.banThreshold ?? 10,
    banSeconds: deps.rateLimit?.banSeconds ?? 900,
  };

  const metrics = deps.metrics ?? new Metrics(deps.db);
  app.use(requestContext(deps.logger, metrics));

  const v1 = express.Router({ strict: false });
  // Answers depend on the key: only the client may keep them, and must revalidate (ETag) before reuse.
  v1.use((_req, res, next) => {
    res.setHeader('Cache-Control', 'private, no-cache');
    next();
  });
  // getPet's deprecation headers go on before anything can answer (401 and 429 included).
  v1.use('/pets/:petId', deprecationHeaders);
  // The identity (API key or client address) is needed by the rate limiter, which answers before authentication; an
  // address already refused is answered before its key is looked up.
  const limiting = createRateLimiting({
    ...limits,
    metrics,
    ...(deps.now && { now: deps.now }),
  });
  v1.use(resolveApiKey(keys, limiting.refuseKnownAddress));
  v1.use(limiting.middleware);
  v1.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(OPENAPI_JSON);
  });
  v1.use(requireApiKey(lastUsed));
  app.use('/v1', v1);

  createExpressEndpoints(
    contract,
    petsRouter(deps.db.pets, limits.store, { validateResponses: deps.validateResponses ?? false }),
    app,
    {
      logInitialization: false,
      responseValidation: deps.validateResponses ?? false,
      // The key's scope, then the body: bodies are read only for a matched route, after authentication and authorization.
      globalMiddleware: [requireScope, jsonBody()],
      requestValidationErrorHandler: (err, _req, _res, next) => next(validationError(err)),
    },
  );
  for (const [path, methods] of allowedMethods(contract)) app.all(path, methodNotAllowed(methods));

  if (deps.adminToken) {
    mountAdminApi(app, {
      admin: new KeyAdmin({
        store: deps.db.apiKeys,
        changes: deps.db.keyChanges,
        limits: limits.store,
        logger: deps.logger,
        via: 'api',
        now,
      }),
      token: deps.adminToken,
      rateLimiting: createAdminRateLimiting({ ...limits, metrics }),
      validateResponses: deps.validateResponses ?? false,
    });
  }

  // Operational routes and the docs page come after the API's routes, so API requests do not walk past them.
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', (req, res) => {
    if (deps.isShuttingDown?.()) {
      sendError(res, 'service_unavailable', 'Shutting down');
      return;
    }
    deps.db.ping().then(
      () => res.json({ status: 'ready' }),
      (err: unknown) => {
        deps.logger.warn({ reqId: req.id, ...briefly(err) }, 'readiness check failed: database unreachable');
        sendError(res, 'service_unavailable', 'Database unreachable');
      },
    );
  });
  app.get('/metrics', (req, res, next) => {
    if (deps.metricsToken && !bearerMatches(req.headers.authorization, deps.metricsToken)) {
      sendError(res, 'unauthorized', 'Metrics need Authorization: Bearer <METRICS_TOKEN>', WWW_AUTHENTICATE);
      return;
    }
    metrics.registry.metrics().then((text) => res.type(metrics.registry.contentType).send(text), next);
  });

  // The human docs page (outside /v1: no key, no limits), rendering /v1/openapi.json with assets from npm packages.
  app.use(docsRouter());

  app.use(notFound);
  app.use(errorHandler(deps.logger, (reason) => metrics.dependencyFailures.inc({ reason })));
  return app;
}
