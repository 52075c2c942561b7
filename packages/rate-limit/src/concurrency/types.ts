/**
 * Types of the concurrency limiter: how many requests of one identity may be in flight at once. Plain data, as for
 * the rate limiter; the server says who is calling and how many they may have in flight.
 */
import type { NamedStore, StoreAnswer } from '../types.js';

/** What the limiter asks a store for, atomically: one slot of `limit` for `key`. */
export interface LeaseRequest {
  /** Identity (an API key's lineage, ...). */
  readonly key: string;
  /** Requests of `key` allowed in flight at once (integer >= 0). */
  readonly limit: number;
  /** The lease's life (ms): a holder that never gives it back (a process that died) frees the slot after this. */
  readonly ttlMs: number;
  /** The lease's name, unique among every holder of every process (the limiter makes it). */
  readonly lease: string;
}

/** Outcome of one atomic acquire. */
export interface LeaseResult extends StoreAnswer {
  /** True when a slot was free and is now held under the request's lease. */
  readonly acquired: boolean;
  /** Leases of the key in flight after this step (counting this one when acquired). */
  readonly inFlight: number;
}

/**
 * Where leases live. `acquire` drops the key's expired leases, counts the others and adds the new one only when fewer
 * than `limit` remain, atomically with respect to every other call for the same key.
 */
export interface ConcurrencyStore extends NamedStore {
  acquire(request: LeaseRequest): Promise<LeaseResult>;
  /** `acquire` answered synchronously, for stores that decide in-process (memory); it must agree with `acquire`. */
  acquireSync?(request: LeaseRequest): LeaseResult;
  /** Gives a lease back (nothing when it already expired or was given back). */
  release(key: string, lease: string): Promise<void>;
  /** `release` done synchronously, for stores that decide in-process (memory). */
  releaseSync?(key: string, lease: string): void;
}
