import {
  createLimiter,
  createMemoryStore,
  createRedisClient,
  createRedisClusterClient,
  createRedisStore,
  createResilientStore,
  limitsForPlan,
  rateLimit,
  rateLimitErrorBody,
  rateLimitHeaders,
  type RateLimitDecision,
  type RateLimitStore,
  type WindowLimit,
  DAY_MS,
  MINUTE_MS,
} from '@animal-store/rate-limit';
import { API_PREFIX, contract } from '@animal-store/contract';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Config } from './config.js';
import { rateLimitIdentityOf } from './keys/identity.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';
import { clientIp } from './http/client-address.js';
import { RefusedAddresses } from './refused-addresses.js';

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

/** Path of the rate-limit status under /v1, which is not charged. */
const RATE_LIMIT_STATUS_PATH = contract.getRateLimit.path.slice(API_PREFIX.length);

/** Limits of the admin API per client address: loose for operators, tight enough to stop guessing the token. */
export const ADMIN_LIMITS = { perMinute: 600, perDay: 20_000 } as const;
const ADMIN_WINDOWS: WindowLimit[] = [
  { name: 'minute', limit: ADMIN_LIMITS.perMinute, windowMs: MINUTE_MS },
  { name: 'day', limit: ADMIN_LIMITS.perDay, windowMs: DAY_MS },
];

/** The admin API's limiter: per client address, its own windows, never a key's plan; bans as for /v1. */
export function createAdminRateLimiting(options: {
  store: RateLimitStore;
  banThreshold: number;
  banSeconds: number;
  metrics?: Metrics | undefined;
}): RequestHandler {
  const { metrics } = options;
  return rateLimit<Request>({
    limiter: createLimiter({
      store: options.store,
      ban: { maxRefusals: options.banThreshold, windowMs: 60_000, durationMs: options.banSeconds * 1000 },
    }),
    identify: (req) => ({ key: `admin:${clientIp(req)}`, windows: ADMIN_WINDOWS }),
    hooks: {
      onDecision: (decision) => {
        if (!decision.allowed)
          metrics?.rateLimitRefusals.inc({
            reason: decision.reason === 'banned' ? 'api_key_banned' : 'rate_limit_exceeded',
          });
      },
      onBan: () => metrics?.rateLimitBans.inc(),
      onFallback: () => metrics?.redisFallbacks.inc(),
    },
  });
}

/**
 * The rate-limit middleware of /v1. Identity: the API key's rotation lineage (its plan's windows), or the client address with the Free
 * plan's windows when the key is missing or invalid, so key guessing is slowed too.
 */
export function createRateLimiting(options: {
  store: RateLimitStore;
  banThreshold: number;
  banSeconds: number;
  metrics?: Metrics | undefined;
  /** Clock of the refused-address memo (tests). */
  now?: () => number;
}): {
  middleware: RequestHandler;
  /**
   * Refuses cheaply, before a key lookup: for a client address this process saw refused and whose refusal may still
   * hold, asks the limiter about the address first (charged as the keyless request it may turn out to be; refusals
   * still count towards a ban) and answers its 429 without looking the key up. Returns false when the address is not
   * known as refused; otherwise it answers, or calls `lookup` when the limiter lets the address through after all.
   */
  refuseKnownAddress: (req: Request, res: Response, next: NextFunction, lookup: () => void) => boolean;
} {
  const limiter = createLimiter({
    store: options.store,
    ban: { maxRefusals: options.banThreshold, windowMs: 60_000, durationMs: options.banSeconds * 1000 },
  });
  const { metrics } = options;
  const freeWindows = limitsForPlan('free');
  const refused = new RefusedAddresses(options.now);
  const countRefusal = (decision: RateLimitDecision) =>
    metrics?.rateLimitRefusals.inc({ reason: decision.reason === 'banned' ? 'api_key_banned' : 'rate_limit_exceeded' });
  const middleware = rateLimit<Request>({
    limiter,
    identify: (req) =>
      req.apiKey ? rateLimitIdentityOf(req.apiKey) : { key: `ip:${clientIp(req)}`, windows: freeWindows },
    hooks: {
      onDecision: (decision, req) => {
        if (decision.allowed) return;
        if (!req.apiKey) refused.remember(clientIp(req), decision);
        countRefusal(decision);
      },
      onBan: () => metrics?.rateLimitBans.inc(),
      onFallback: () => metrics?.redisFallbacks.inc(),
    },
  });
  return {
    // GET /v1/rate_limit with a valid key is let through uncharged (it reads the windows without consuming them).
    middleware: (req, res, next) => {
      if (req.apiKey && req.path === RATE_LIMIT_STATUS_PATH && (req.method === 'GET' || req.method === 'HEAD')) next();
      else middleware(req, res, next);
    },
    refuseKnownAddress(req, res, next, lookup) {
      const address = clientIp(req);
      if (!refused.check(address)) return false;
      limiter.consume(`ip:${address}`, freeWindows).then((decision) => {
        if (decision.allowed) {
          lookup();
          return;
        }
        refused.remember(address, decision);
        countRefusal(decision);
        if (decision.banStarted) metrics?.rateLimitBans.inc();
        res
          .status(429)
          .set(rateLimitHeaders(decision))
          .type('application/json')
          .end(JSON.stringify(rateLimitErrorBody(decision)));
      }, next);
      return true;
    },
  };
}
