import {
  concurrencyLimit,
  createConcurrencyLimiter,
  createMemoryConcurrencyStore,
  createRedisConcurrencyStore,
  createResilientConcurrencyStore,
  type ConcurrencyLimiter,
} from '@animal-store/rate-limit';
import type { Request, RequestHandler, Response } from 'express';
import type { Cluster, Redis } from 'ioredis';
import type { Config } from '../config/load.js';
import { sendError } from '../http/error-handler.js';
import { rateLimitIdentityOf } from '../keys/identity.js';
import type { Logger } from '../logger.js';

/** Key prefix of the service's concurrency leases in Redis (one sorted set per key lineage). */
export const CONCURRENCY_PREFIX = 'animal-store:cc:';

/** Seconds a client refused for having too many requests in flight waits: one of them will soon be answered. */
export const CONCURRENCY_RETRY_AFTER_SECONDS = 1;

/**
 * The limiter of requests in flight per key lineage the configuration asks for (CONCURRENCY_LIMITS): `replica` counts
 * them in each process's memory (the default: it protects what each process can serve, at no cost), `shared` in the
 * rate limits' Redis when there is one (exact across replicas, one more script call and a ZREM per request; in memory
 * while Redis is down, and without one), `off` nowhere (undefined). docs/overload.md has the measurements.
 */
export function createKeyConcurrencyLimiter(
  config: Pick<Config, 'concurrency'>,
  logger: Logger,
  redis: Redis | Cluster | undefined,
  options: { now?: () => number; prefix?: string } = {},
): ConcurrencyLimiter | undefined {
  const { scope, leaseMs } = config.concurrency;
  if (scope === 'off') return undefined;
  const memory = createMemoryConcurrencyStore(options.now ? { now: options.now } : {});
  const store =
    scope === 'shared' && redis !== undefined
      ? createResilientConcurrencyStore({
          primary: createRedisConcurrencyStore({ client: redis, prefix: options.prefix ?? CONCURRENCY_PREFIX }),
          fallback: memory,
          onOutage: (err) =>
            logger.warn({ err: (err as Error).message }, 'Redis unreachable: concurrency limits in memory per replica'),
          onRecover: () => logger.info('Redis reachable again: concurrency limits shared through Redis'),
        })
      : memory;
  return createConcurrencyLimiter({
    store,
    leaseMs,
    onReleaseError: (err) =>
      logger.debug({ err: (err as Error).message }, 'could not give a concurrency slot back; its lease expires'),
  });
}

/**
 * The /v1 middleware, after the rate limiter: a request with a valid key holds one of its lineage's slots (its plan's
 * concurrent requests) until its response closes, however it ends; the excess gets 429 `concurrency_limit_exceeded`
 * with `Retry-After` and the rate-limit headers the limiter already set. Keyless requests are not counted: they are
 * refused before any work.
 */
export function keyConcurrencyLimiting(
  limiter: ConcurrencyLimiter,
  hooks: {
    onRefused?: (req: Request) => void;
    /** A request took a slot of its key's lineage (`req.apiKey` is set), which it holds until its response closes. */
    onAdmitted?: (req: Request, res: Response) => void;
  } = {},
): RequestHandler {
  const { onRefused, onAdmitted } = hooks;
  return concurrencyLimit<Request, Response>({
    limiter,
    identify: (req) => (req.apiKey ? rateLimitIdentityOf(req.apiKey) : undefined),
    onRefused: (req, res, _next, decision) => {
      onRefused?.(req);
      sendError(res, 'concurrency_limit_exceeded', concurrencyRefusalMessage(decision.limit), {
        'Retry-After': String(CONCURRENCY_RETRY_AFTER_SECONDS),
      });
    },
    ...(onAdmitted && {
      hooks: {
        onDecision: (decision, req) => {
          if (decision.allowed && req.res) onAdmitted(req, req.res);
        },
      },
    }),
  });
}

/** The message of a 429 `concurrency_limit_exceeded`. */
export function concurrencyRefusalMessage(limit: number): string {
  return `Too many requests of this API key in flight (${limit} at once); retry when one has been answered`;
}
