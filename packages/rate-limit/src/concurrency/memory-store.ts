import type { ConcurrencyStore, LeaseRequest, LeaseResult } from './types.js';

/** Options of {@link createMemoryConcurrencyStore}. */
export interface MemoryConcurrencyStoreOptions {
  /** Clock in ms. Default `Date.now`; inject in tests. */
  readonly now?: () => number;
}

/** The in-process concurrency store; its `acquire` also answers synchronously. */
export interface MemoryConcurrencyStore extends ConcurrencyStore {
  readonly name: 'memory';
  acquireSync(request: LeaseRequest): LeaseResult;
  releaseSync(key: string, lease: string): void;
  /** Identities holding at least one lease. */
  readonly size: number;
}

/**
 * Leases per identity in this process: a map of lease -> expiry per identity, dropped when its last lease goes, so it
 * holds only what is in flight. Expired leases are dropped when their identity is full, as the Redis store does.
 */
export function createMemoryConcurrencyStore(options: MemoryConcurrencyStoreOptions = {}): MemoryConcurrencyStore {
  const clock = options.now ?? Date.now;
  const held = new Map<string, Map<string, number>>();

  const acquireSync = (request: LeaseRequest): LeaseResult => {
    let leases = held.get(request.key);
    const now = clock();
    if (leases !== undefined && leases.size >= request.limit) {
      for (const [lease, expiresAt] of leases) if (expiresAt <= now) leases.delete(lease);
    }
    const inFlight = leases?.size ?? 0;
    if (inFlight >= request.limit) return { acquired: false, inFlight, source: 'memory' };
    if (leases === undefined) held.set(request.key, (leases = new Map<string, number>()));
    leases.set(request.lease, now + request.ttlMs);
    return { acquired: true, inFlight: inFlight + 1, source: 'memory' };
  };

  const releaseSync = (key: string, lease: string): void => {
    const leases = held.get(key);
    if (leases?.delete(lease) && leases.size === 0) held.delete(key);
  };

  return {
    name: 'memory',
    get size() {
      return held.size;
    },
    acquireSync,
    acquire: (request) => Promise.resolve(acquireSync(request)),
    releaseSync,
    release(key, lease) {
      releaseSync(key, lease);
      return Promise.resolve();
    },
    close: () => Promise.resolve(held.clear()),
  };
}
