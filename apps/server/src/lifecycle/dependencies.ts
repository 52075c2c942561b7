import type { ConcurrencyLimiter, RateLimitStore } from '@animal-store/rate-limit';
import type { Config } from '../config/load.js';
import { openDatabaseWithRetry } from '../db/database.js';
import type { Database } from '../db/types.js';
import { lastUsedRecorder, type LastUsedRecorder } from '../keys/last-used.js';
import type { Logger } from '../logger.js';
import { Metrics } from '../telemetry/metrics.js';
import { SERVICE } from '../telemetry/service.js';
import { createOverload, type Overload } from '../overload/overload.js';
import { createKeyConcurrencyLimiter } from '../rate-limiting/concurrency.js';
import { createRateLimitStore, sharedRedisClient } from '../rate-limiting/store.js';

/** What the process opens before it serves, and closes after the last answer. */
export interface Dependencies {
  db: Database;
  metrics: Metrics;
  rateLimitStore: RateLimitStore;
  /** Requests in flight per key lineage (undefined: CONCURRENCY_LIMITS=off); shares the rate limits' Redis. */
  concurrency: ConcurrencyLimiter | undefined;
  /** Load shedding (undefined: LOAD_SHEDDING=false); its monitor is started once the server listens. */
  overload: Overload | undefined;
  lastUsed: LastUsedRecorder;
}

/** Opens the database (retrying for a bounded time while it is not reachable yet) and the rate-limit store. */
export async function openDependencies(config: Config, logger: Logger): Promise<Dependencies> {
  const db = await openDatabaseWithRetry(config, {
    onPoolerWithoutTimeouts: () =>
      logger.warn(
        'the database (a pooler) refuses statement_timeout and lock_timeout at connect: set them on the role; pg query_timeout still bounds queries',
      ),
    timeoutMs: config.databaseStartupTimeoutMs,
    onConnectionError: (err) => logger.warn({ err: err.message }, 'database connection lost; the pool replaces it'),
    onRetry: (err, attempt) =>
      logger.warn({ attempt, err: (err as Error).message }, 'database not reachable yet; retrying'),
  }).catch((err: unknown) => {
    throw new Error(`cannot open the database named by DATABASE_URL: ${(err as Error).message}`);
  });
  const metrics = new Metrics(db, { version: SERVICE.version, poolMax: config.databaseLimits.poolSize });
  const redis = sharedRedisClient(config);
  return {
    db,
    metrics,
    // Outages of the shared store are counted where they start, once each (not once per request they touch).
    rateLimitStore: createRateLimitStore(
      config,
      logger,
      { onFallback: () => metrics.rateLimitStoreFallbacks.inc() },
      redis,
    ),
    concurrency: createKeyConcurrencyLimiter(config, logger, redis),
    overload: config.loadShedding.enabled
      ? createOverload(config.loadShedding, { registry: metrics.registry, db, logger })
      : undefined,
    lastUsed: lastUsedRecorder(db, logger),
  };
}

/** Writes the last uses noted since the last flush, then closes the database and the rate-limit store. */
export async function closeDependencies(deps: Dependencies, logger: Logger): Promise<void> {
  await deps.lastUsed
    .close()
    .catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'could not record when keys were last used'));
  deps.overload?.monitor.stop();
  await deps.concurrency?.store.close();
  await Promise.all([deps.db.close(), deps.rateLimitStore.close()]);
}
