import type { Cluster, Redis } from 'ioredis';
import {
  createMemoryStore,
  createRedisClient,
  createRedisClusterClient,
  createRedisStore,
  createResilientStore,
  type RateLimitStore,
} from '@animal-store/rate-limit';
import type { Config } from '../config/load.js';
import type { Logger } from '../logger.js';
import { tracedRedis } from '../telemetry/traced-store.js';

/** Key prefix of the service's counters and bans in Redis. */
export const REDIS_PREFIX = 'animal-store:rl:';

type StoreConfig = Pick<Config, 'redisUrl' | 'redisClusterNodes' | 'rateLimit'>;

export interface RateLimitStoreOptions {
  prefix?: string;
  now?: () => number;
  /** Tests on a loaded machine: the Redis command timeout (the package's default otherwise; the fallback waits twice as long). */
  timeoutMs?: number;
  /** Told once per outage of the shared store, when it starts (the metric of switches, not of requests served). */
  onFallback?: () => void;
}

/**
 * The store shared by every replica, when the configuration names one: Redis (`REDIS_URL`) or a Redis Cluster
 * (`REDIS_CLUSTER_NODES`), which falls back to memory (or refuses with 503) while it is unreachable and returns to it
 * by itself. On a cluster all keys of an identity share one slot (hash tag), so a decision is one script call on one
 * master, as on a single Redis. Undefined when neither is set: counters then live in each process's memory.
 */
export function createSharedRateLimitStore(
  config: StoreConfig,
  logger: Logger,
  options: RateLimitStoreOptions = {},
  client: Redis | Cluster | undefined = sharedRedisClient(config, options),
): RateLimitStore | undefined {
  if (client === undefined) return undefined;
  const mode = config.rateLimit.redisFailure;
  return createResilientStore({
    primary: tracedRedis(createRedisStore({ client, prefix: options.prefix ?? REDIS_PREFIX }), config.redisUrl),
    mode,
    ...(options.timeoutMs !== undefined ? { timeoutMs: Math.max(500, options.timeoutMs * 2) } : {}),
    onFallback: (err) => {
      options.onFallback?.();
      logger.warn(
        { err: (err as Error).message, mode },
        mode === 'fallback'
          ? 'Redis unreachable: rate limiting in memory per replica'
          : 'Redis unreachable: refusing requests with 503',
      );
    },
    onRecover: () => logger.info('Redis reachable again: rate limiting shared through Redis'),
  });
}

/**
 * The store the configuration asks for: the shared one (see above) on `client` (the configuration's, by default), or
 * in memory (the embedded default).
 */
export function createRateLimitStore(
  config: StoreConfig,
  logger: Logger,
  options: RateLimitStoreOptions = {},
  client: Redis | Cluster | undefined = sharedRedisClient(config, options),
): RateLimitStore {
  return (
    createSharedRateLimitStore(config, logger, options, client) ??
    createMemoryStore(options.now ? { now: options.now } : {})
  );
}

/**
 * The client of the Redis (or Redis Cluster) the configuration names, undefined without one. The rate limiter's store
 * owns it (closes it); the concurrency limiter shares it.
 */
export function sharedRedisClient(
  config: Pick<Config, 'redisUrl' | 'redisClusterNodes'>,
  options: Pick<RateLimitStoreOptions, 'timeoutMs'> = {},
): Redis | Cluster | undefined {
  const commandTimeout = options.timeoutMs !== undefined ? { commandTimeout: options.timeoutMs } : {};
  if (config.redisClusterNodes) return createRedisClusterClient({ nodes: config.redisClusterNodes, ...commandTimeout });
  return config.redisUrl ? createRedisClient({ url: config.redisUrl, ...commandTimeout }) : undefined;
}
