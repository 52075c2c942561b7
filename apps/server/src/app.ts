import { createMemoryStore, type ConcurrencyLimiter, type RateLimitStore } from '@animal-store/rate-limit';
import express, { type Express, type RequestHandler } from 'express';
import { DEFAULTS } from './config/defaults.js';
import type { TrustProxy } from './config/trust-proxy.js';
import type { Database } from './db/types.js';
import { installIfNoneMatch } from './fast-path/if-none-match.js';
import { installLeanJson } from './fast-path/lean-json.js';
import { installResponseCheck } from './fast-path/response-check.js';
import { mountAdminApi } from './http/admin.js';
import { mountApi } from './http/api.js';
import { docsRouter } from './http/docs.js';
import { errorHandler, notFound } from './http/error-handler.js';
import { mountOperations } from './http/operations.js';
import { requestContext } from './http/request-context.js';
import { KeyAdmin } from './keys/admin.js';
import { lastUsedRecorder, type LastUsedRecorder } from './keys/last-used.js';
import { KeyResolver } from './keys/resolver.js';
import type { Logger } from './logger.js';
import { Metrics } from './telemetry/metrics.js';
import { useDbMetrics } from './telemetry/db-telemetry.js';
import { OverloadMetrics } from './overload/metrics.js';
import type { KeyDoor } from './overload/key-door.js';
import { connectKeys, type Overload } from './overload/overload.js';
import { rateLimitIdentityOf } from './keys/identity.js';
import { createAdminRateLimiting } from './rate-limiting/admin-limits.js';
import { createRateLimiting } from './rate-limiting/api-limits.js';
import { createKeyConcurrencyLimiter, keyConcurrencyLimiting } from './rate-limiting/concurrency.js';
import { refundCharge } from './rate-limiting/refund.js';

export interface AppDeps {
  db: Database;
  logger: Logger;
  /** How long key lookups are cached in-process (ms). */
  keyCacheTtlMs?: number;
  /**
   * Rate limiting of /v1 (X-RateLimit-* on every answer): the store of counters and bans, and the ban rule.
   * Default: an in-memory store (the embedded default) and the configuration's default ban rule.
   */
  rateLimit?: { store: RateLimitStore; banThreshold?: number; banSeconds?: number };
  /**
   * Requests in flight per key lineage (the plan's concurrent requests), or false for none. Default: counted in this
   * process's memory (rate-limiting/concurrency.ts).
   */
  concurrency?: ConcurrencyLimiter | false;
  /**
   * Express's `trust proxy` for the client address of keyless limits: false (the socket's address), a number of proxy
   * hops, or trusted proxy addresses/CIDRs (config's TRUST_PROXY). `true` means one hop, never "trust every hop".
   */
  trustProxy?: TrustProxy | true;
  /**
   * Check every answer of a contract route against the contract, sending it unchanged (tests; see
   * fast-path/response-check.ts); costs time, so off in production.
   */
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
  /**
   * Load shedding (overload/overload.ts): its gate learns plans from this app's key cache and decides uncached keys
   * after their lookup; createServer runs the gate before the app. None: nothing is shed.
   */
  overload?: Overload | undefined;
}

/** Express settings of the app, the fast paths of its JSON answers and conditional requests, and the tests' check. */
function configureExpress(app: Express, { trustProxy, validateResponses }: AppDeps): void {
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  // Routes match their own spelling only: `/v1/Rate_Limit` or `/v1/pets/` is no route (404), never a route's twin
  // that skips what the route's own spelling gets (its limits, its headers).
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  // Strong ETags on 2xx GET answers, and If-None-Match answered 304 with no body, every other header kept: JSON answers
  // through installLeanJson, anything else through Express's send with the same rule for freshness.
  app.set('etag', 'strong');
  installIfNoneMatch(app);
  installLeanJson(app);
  if (validateResponses) installResponseCheck(app);
  app.set('trust proxy', trustProxy === true ? 1 : (trustProxy ?? false));
}

/** The key lookups of the request path, emptied whenever a key changes anywhere (this process or another replica). */
function keyResolver(deps: AppDeps, now: () => number): KeyResolver {
  const keys = new KeyResolver(deps.db.apiKeys, deps.keyCacheTtlMs ?? DEFAULTS.keyCacheTtlMs, now);
  deps.db.keyChanges.subscribe(() => keys.clear());
  return keys;
}

/** The /v1 limit of requests in flight per key lineage, unless turned off. */
function concurrencyLimiting(
  deps: AppDeps,
  now: () => number,
  overload: OverloadMetrics,
  door: KeyDoor | undefined,
): RequestHandler | undefined {
  const limiter =
    deps.concurrency ??
    createKeyConcurrencyLimiter({ concurrency: DEFAULTS.concurrency }, deps.logger, undefined, { now });
  if (limiter === false || limiter === undefined) return undefined;
  return keyConcurrencyLimiting(limiter, {
    onRefused: (req) => overload.concurrencyRefusals.inc({ plan: req.apiKey?.plan ?? 'none' }),
    ...(door && {
      onAdmitted: (req, res) => door.track(rateLimitIdentityOf(req.apiKey!), req.rateLimitCharge, res),
    }),
  });
}

/** Builds the Express app from explicit dependencies. Listening is main.ts's job. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  configureExpress(app, deps);
  const now = deps.now ?? Date.now;
  const limits = {
    store: deps.rateLimit?.store ?? createMemoryStore(),
    banThreshold: deps.rateLimit?.banThreshold ?? DEFAULTS.rateLimit.banThreshold,
    banSeconds: deps.rateLimit?.banSeconds ?? DEFAULTS.rateLimit.banSeconds,
  };
  const metrics = deps.metrics ?? new Metrics(deps.db);
  useDbMetrics(metrics);
  const overload = deps.overload?.metrics ?? new OverloadMetrics(metrics.registry);
  const keys = keyResolver(deps, now);
  const door =
    deps.overload &&
    connectKeys(deps.overload, keys, now, (plan) => metrics.rateLimitRefusals.inc({ reason: 'api_key_banned', plan }));
  app.use(requestContext(deps.logger, metrics));

  mountApi(app, {
    pets: deps.db.pets,
    keys,
    afterKeyLookup: deps.overload?.admission.afterKeyLookup,
    lastUsed: deps.lastUsed ?? lastUsedRecorder(deps.db, deps.logger, now),
    limiting: createRateLimiting({
      ...limits,
      metrics,
      ...(deps.now && { now: deps.now }),
      ...(door && { onKeyBanned: (req, decision) => door.banned(rateLimitIdentityOf(req.apiKey!), decision) }),
    }),
    concurrency: concurrencyLimiting(deps, now, overload, door),
    limits: limits.store,
    registry: metrics.registry,
    onKeyLookup: (result) => metrics.apiKeyLookups.inc({ result }),
    now,
  });
  if (deps.adminToken) {
    const { db, logger } = deps;
    mountAdminApi(app, {
      admin: new KeyAdmin({ store: db.apiKeys, changes: db.keyChanges, limits: limits.store, logger, via: 'api', now }),
      token: deps.adminToken,
      rateLimiting: createAdminRateLimiting({ ...limits, metrics }),
    });
  }
  // Operational routes and the docs page come after the API's routes, so API requests do not walk past them.
  mountOperations(app, { ...deps, metrics });
  // The human docs page (outside /v1: no key, no limits), rendering /v1/openapi.json with assets from npm packages.
  app.use(docsRouter());

  app.use(notFound);
  const refund = refundCharge(limits.store, deps.logger);
  app.use(
    errorHandler(deps.logger, (reason, res) => {
      metrics.dependencyFailures.inc({ reason });
      res.errorType = reason;
      refund(res);
    }),
  );
  return app;
}
