import { RateLimitStoreUnavailableError } from './errors.js';
import { createMemoryStore } from './memory-store.js';
import type { RateLimitStore, StoreRequest, StoreResult } from './types.js';

/** Options of {@link createResilientStore}. */
export interface ResilientStoreOptions {
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
  /** Called once when the primary answers again after an outage. */
  readonly onRecover?: () => void;
  /**
   * Upper bound (ms) on a primary call, on top of the client's own command timeout
   * (default 500). The timer is `unref()`ed and cleared.
   */
  readonly timeoutMs?: number;
  /**
   * While the primary is down, it is retried by at most one request per this
   * interval (default 500 ms); other requests go straight to the fallback / fail,
   * so an outage adds no latency.
   */
  readonly retryIntervalMs?: number;
  /** Clock for the retry interval (default `Date.now`). */
  readonly now?: () => number;
}

/** A store wrapper that survives outages of its primary; see {@link createResilientStore}. */
export interface ResilientStore extends RateLimitStore {
  /** `true` while the primary is considered down. */
  readonly degraded: boolean;
}

/**
 * Wraps a primary store (Redis) so the limiter keeps answering during an outage.
 * Recovery is automatic: after `retryIntervalMs` the next request probes the
 * primary again and, on success, traffic returns to it.
 */
export function createResilientStore(options: ResilientStoreOptions): ResilientStore {
  const { primary, mode } = options;
  const fallback = options.fallback ?? (mode === 'fallback' ? createMemoryStore() : undefined);
  const timeoutMs = options.timeoutMs ?? 500;
  const retryIntervalMs = options.retryIntervalMs ?? 500;
  const clock = options.now ?? Date.now;

  let down = false;
  let nextProbeAt = 0;
  let probing = false;
  let lastError: unknown;

  const onPrimaryError = (err: unknown): void => {
    lastError = err;
    nextProbeAt = clock() + retryIntervalMs;
    if (!down) {
      down = true;
      try {
        options.onFallback?.(err);
      } catch {
        // a failing logger must not break rate limiting
      }
    }
  };

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
      return down;
    },
    // Where the charge was made: the fallback's during an outage, else the primary's (bounded like a decision).
    async refund(request) {
      if (request.fallback) await fallback?.refund(request);
      else await withTimeout(primary.refund(request), timeoutMs);
    },
    // Both: an identity's state may sit in the fallback from an outage, and in the primary.
    async resetKey(key) {
      await Promise.all([primary.resetKey(key), fallback?.resetKey(key)]);
    },
    async close() {
      await Promise.all([primary.close(), fallback?.close()]);
    },
    async consume(request) {
      if (down && (probing || clock() < nextProbeAt)) {
        return useFallback(request, lastError);
      }
      const isProbe = down;
      if (isProbe) probing = true;
      try {
        const result = await withTimeout(primary.consume(request), timeoutMs);
        if (down) {
          down = false;
          try {
            options.onRecover?.();
          } catch {
            // ignore
          }
        }
        return result;
      } catch (err) {
        onPrimaryError(err);
        return useFallback(request, err);
      } finally {
        if (isProbe) probing = false;
      }
    },
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Rate-limit store timed out after ${ms} ms`)), ms);
    timer.unref();
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
