import { randomBytes } from 'node:crypto';
import type { ConcurrencyStore, LeaseResult } from './types.js';

/** The limiter's answer for one request. */
export interface ConcurrencyDecision {
  /** True when the request holds a slot: it must `release()` it when done. */
  readonly allowed: boolean;
  /** The identity the decision is about. */
  readonly key: string;
  /** Requests allowed in flight at once. */
  readonly limit: number;
  /** The identity's requests in flight after this decision (counting this one when allowed). */
  readonly inFlight: number;
  /** Name of the store that answered. */
  readonly source: string;
  /** Present when a resilient store answered from its fallback because the primary failed. */
  readonly fallbackError?: unknown;
  /** Gives the slot back (once; later calls and refused decisions do nothing). Never throws. */
  release(): void;
}

/** Options of {@link createConcurrencyLimiter}. */
export interface ConcurrencyLimiterOptions {
  readonly store: ConcurrencyStore;
  /** A lease's life (ms): what a process that died holding slots keeps them for. Default 30 000. */
  readonly leaseMs?: number;
  /** Told when a release failed (the store unreachable); the lease then expires by itself. */
  readonly onReleaseError?: (err: unknown) => void;
}

export interface ConcurrencyLimiter {
  readonly store: ConcurrencyStore;
  readonly leaseMs: number;
  /** Takes one of `limit` slots for `key` when one is free. Rejects with the store's error. */
  acquire(key: string, limit: number): Promise<ConcurrencyDecision>;
  /** `acquire` answered synchronously; present only when the store decides in-process (memory). */
  readonly acquireSync?: (key: string, limit: number) => ConcurrencyDecision;
}

/** A limit of requests in flight per identity, on any {@link ConcurrencyStore}. */
export function createConcurrencyLimiter(options: ConcurrencyLimiterOptions): ConcurrencyLimiter {
  const { store } = options;
  const leaseMs = options.leaseMs ?? 30_000;
  if (!Number.isSafeInteger(leaseMs) || leaseMs < 1) throw new RangeError(`leaseMs must be a whole number >= 1`);
  // Lease names are unique across processes: a random tag per limiter, then a counter.
  const tag = randomBytes(9).toString('base64url');
  let sequence = 0;
  const request = (key: string, limit: number) => {
    if (!Number.isSafeInteger(limit) || limit < 0)
      throw new RangeError(`concurrency limit must be a whole number >= 0`);
    return { key, limit, ttlMs: leaseMs, lease: `${tag}:${(++sequence).toString(36)}` };
  };
  const onReleaseError = options.onReleaseError ?? (() => undefined);
  const decision = (key: string, limit: number, lease: string, result: LeaseResult): ConcurrencyDecision =>
    new Slot(store, onReleaseError, key, limit, lease, result);
  const acquireSync = store.acquireSync?.bind(store);
  return {
    store,
    leaseMs,
    async acquire(key, limit) {
      const asked = request(key, limit);
      return decision(key, limit, asked.lease, await store.acquire(asked));
    },
    ...(acquireSync !== undefined && {
      acquireSync: (key: string, limit: number) => {
        const asked = request(key, limit);
        return decision(key, limit, asked.lease, acquireSync(asked));
      },
    }),
  };
}

/** A decision, and for an allowed one the slot it holds (a class: no closure per request). */
class Slot implements ConcurrencyDecision {
  readonly allowed: boolean;
  readonly inFlight: number;
  readonly source: string;
  readonly fallbackError?: unknown;
  #held: boolean;

  constructor(
    private readonly store: ConcurrencyStore,
    private readonly onReleaseError: (err: unknown) => void,
    readonly key: string,
    readonly limit: number,
    private readonly lease: string,
    result: LeaseResult,
  ) {
    this.allowed = this.#held = result.acquired;
    this.inFlight = result.inFlight;
    this.source = result.source;
    if (result.fallbackError !== undefined) this.fallbackError = result.fallbackError;
  }

  release(): void {
    if (!this.#held) return;
    this.#held = false;
    if (this.store.releaseSync !== undefined) this.store.releaseSync(this.key, this.lease);
    else this.store.release(this.key, this.lease).catch(this.onReleaseError);
  }
}
