import {
  clientAddress,
  createLimiter,
  createMemoryStore,
  createRedisClient,
  createRedisClusterClient,
  createRedisStore,
  createResilientStore,
  limitsForPlan,
  rateLimit,
  type RateLimitIdentity,
  type RateLimitStore,
} from '@animal-store/rate-limit';
import type { Request, RequestHandler } from 'express';
import type { Config } from './config.js';
import type { ApiKeyRecord } from './db/types.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';

/** Key prefix of the service's counters and bans in Redis. */
export const REDIS_PREFIX = 'animal-store:rl:';

/**
 * The store the configuration asks for: in memory (the embedded default), or Redis (`REDIS_URL`) or a Redis Cluster
 * (`REDIS_CLUSTER_NODES`) shared by every replica, which falls back to memory (or refuses with 503) while Redis is
 * unreachable and returns to it by itself. On a cluster all keys of an identity share one slot (hash tag), so a
 * decision is one script call on one master, as on a single Redis.
 */
export function createRateLimitStore(
  config: Pick<Config, 'redisUrl' | 'redisClusterNodes' | 'rateLimit'>,
  logger: Logger,
  options: {
    prefix?: string;
    now?: () => number;
    /** Tests on a loaded machine: the Redis command timeout (default 100 ms; the fallback waits twice as long). */
    timeoutMs?: number;
  } = {},
): RateLimitStore {
  const commandTimeout = options.timeoutMs ?? 100;
  const client = config.redisClusterNodes
    ? createRedisClusterClient({ nodes: config.redisClusterNodes, commandTimeout })
    : config.redisUrl
      ? createRedisClient({ url: config.redisUrl, commandTimeout })
      : undefined;
  if (client === undefined) return createMemoryStore(options.now ? { now: options.now } : {});
  return createResilientStore({
    primary: createRedisStore({ client, prefix: options.prefix ?? REDIS_PREFIX }),
    mode: config.rateLimit.redisFailure,
    ...(options.timeoutMs !== undefined ? { timeoutMs: Math.max(500, options.timeoutMs * 2) } : {}),
    onFallback: (err) =>
      logger.warn(
        { err: (err as Error).message, mode: config.rateLimit.redisFailure },
        config.rateLimit.redisFailure === 'fallback'
          ? 'Redis unreachable: rate limiting in memory per replica'
          : 'Redis unreachable: refusing requests with 503',
      ),
    onRecover: () => logger.info('Redis reachable again: rate limiting shared through Redis'),
  });
}

/**
 * The rate-limit middleware of /v1. Identity: the API key id (its plan's windows), or the client address with the Free
 * plan's windows when the key is missing or invalid, so key guessing is slowed too.
 */
export function createRateLimiting(options: {
  store: RateLimitStore;
  banThreshold: number;
  banSeconds: number;
  trustProxy: boolean;
  metrics?: Metrics | undefined;
}): RequestHandler {
  const limiter = createLimiter({
    store: options.store,
    ban: { maxRefusals: options.banThreshold, windowMs: 60_000, durationMs: options.banSeconds * 1000 },
  });
  const { metrics } = options;
  // A key's identity is the same on every request: built once per key record (records live in the key cache).
  const keyIdentities = new WeakMap<ApiKeyRecord, RateLimitIdentity>();
  const keyIdentity = (key: ApiKeyRecord): RateLimitIdentity => {
    let identity = keyIdentities.get(key);
    if (identity === undefined) {
      identity = {
        key: `key:${key.id}`,
        windows: limitsForPlan(key.plan, { perMinute: key.perMinute, perDay: key.perDay }),
      };
      keyIdentities.set(key, identity);
    }
    return identity;
  };
  const freeWindows = limitsForPlan('free');
  return rateLimit<Request>({
    limiter,
    identify: (req) =>
      req.apiKey
        ? keyIdentity(req.apiKey)
        : { key: `ip:${clientAddress(req, options.trustProxy)}`, windows: freeWindows },
    hooks: metrics && {
      onDecision: (decision) => {
        if (!decision.allowed)
          metrics.rateLimitRefusals.inc({
            reason: decision.reason === 'banned' ? 'api_key_banned' : 'rate_limit_exceeded',
          });
      },
      onBan: () => metrics.rateLimitBans.inc(),
      onFallback: () => metrics.redisFallbacks.inc(),
    },
  });
}
