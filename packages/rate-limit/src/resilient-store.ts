import { RateLimitStoreUnavailableError } from './errors.js';
import { createMemoryStore } from './memory-store.js';
import { createOutageGuard, type OutageGuardOptions } from './outage-guard.js';
import type { RateLimitStore, StoreRequest, StoreResult } from './types.js';

/** Options of {@link createResilientStore}; the outage rule's own (timeout, retry interval, clock) as the guard's. */
export interface ResilientStoreOptions extends Omit<OutageGuardOptions, 'onOutage'> {
  /** The shared store, typically the Redis store. */
  readonly primary: RateLimitStore;
  /**
   * `fallback`: answer from `fallback` while the primary fails (limits become per process).
   * `refuse`: reject with {@link RateLimitStoreUnavailableError} (HTTP 503).
   */
  readonly mode: 'fallback' | 'refuse';
  /** Store used in `fallback` mode. Default: a fresh {@link createMemoryStore}. */
  readonly fallback?: RateLimitStore;
  /** Called once when an outage starts (first failure after a success). */
  readonly onFallback?: (err: unknown) => void;
}

/** A store wrapper that survives outages of its primary; see {@link createResilientStore}. */
export interface ResilientStore extends RateLimitStore {
  /** `true` while the primary is considered down. */
  readonly degraded: boolean;
}

/**
 * Wraps a primary store (Redis) so the limiter keeps answering during an outage, by the rule of
 * {@link createOutageGuard}: while the primary is down, requests go straight to the fallback (or fail), so an outage
 * adds no latency; one request per `retryIntervalMs` probes it, and on success traffic returns to it.
 */
export function createResilientStore(options: ResilientStoreOptions): ResilientStore {
  const { primary, mode } = options;
  const fallback = options.fallback ?? (mode === 'fallback' ? createMemoryStore() : undefined);
  const guard = createOutageGuard({ ...options, onOutage: options.onFallback });

  const useFallback = async (request: StoreRequest, err: unknown): Promise<StoreResult> => {
    if (mode === 'refuse' || fallback === undefined) {
      throw new RateLimitStoreUnavailableError(undefined, { cause: err });
    }
    const result = await fallback.consume(request);
    return { ...result, fallbackError: err };
  };

  return {
    name: `resilient(${primary.name})`,
    get degraded() {
      return guard.down;
    },
    // Where the charge was made: the fallback's during an outage, else the primary's (bounded like a decision).
    async refund(request) {
      if (request.fallback) await fallback?.refund(request);
      else await guard.bounded(primary.refund(request));
    },
    // Both: an identity's state may sit in the fallback from an outage, and in the primary.
    async resetKey(key) {
      await Promise.all([primary.resetKey(key), fallback?.resetKey(key)]);
    },
    async close() {
      await Promise.all([primary.close(), fallback?.close()]);
    },
    async consume(request) {
      const answer = await guard.run(() => primary.consume(request));
      return answer.ok ? answer.value : useFallback(request, answer.error);
    },
  };
}
