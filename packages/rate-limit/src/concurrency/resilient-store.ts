import { createOutageGuard, type OutageGuardOptions } from '../outage-guard.js';
import { createMemoryConcurrencyStore } from './memory-store.js';
import type { ConcurrencyStore, LeaseResult } from './types.js';

/** Options of {@link createResilientConcurrencyStore}. */
export interface ResilientConcurrencyStoreOptions extends OutageGuardOptions {
  /** The shared store, typically the Redis one. */
  readonly primary: ConcurrencyStore;
  /** Where leases go while the primary is down. Default: a fresh memory store (limits per process meanwhile). */
  readonly fallback?: ConcurrencyStore;
}

/**
 * Wraps a primary store (Redis) so that an outage never refuses a request for want of a count: while it is down,
 * leases are taken from the fallback (per process), and each is given back to the store that gave it. Leases held in
 * the primary when it failed expire there.
 */
export function createResilientConcurrencyStore(options: ResilientConcurrencyStoreOptions): ConcurrencyStore {
  const { primary } = options;
  const fallback = options.fallback ?? createMemoryConcurrencyStore();
  const guard = createOutageGuard(options);
  /** Leases the fallback gave, so that each goes back where it came from. */
  const fromFallback = new Set<string>();
  return {
    name: `resilient(${primary.name})`,
    async acquire(request): Promise<LeaseResult> {
      const primaryResult = await guard.run(() => primary.acquire(request));
      if (primaryResult.ok) return primaryResult.value;
      const result = await fallback.acquire(request);
      if (result.acquired) fromFallback.add(request.lease);
      return { ...result, fallbackError: primaryResult.error };
    },
    async release(key, lease) {
      if (fromFallback.delete(lease)) await fallback.release(key, lease);
      else await primary.release(key, lease);
    },
    async close() {
      await Promise.all([primary.close(), fallback.close()]);
    },
  };
}
