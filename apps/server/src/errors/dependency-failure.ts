/**
 * Tells a failing dependency (the database down, slow, saturated, out of disk or read-only; the rate-limit store in
 * refuse mode) from a bug, in one place: the error handler answers the first kind 503 `service_unavailable` with
 * `Retry-After`, so clients retry, and logs one line without a stack; start-up retries the transient ones. Anything
 * not recognised here stays a 500.
 */
import { RateLimitStoreUnavailableError } from '@animal-store/rate-limit';
import type { DependencyFailure } from './dependency-reasons.js';
import { driverFailure } from './driver-errors.js';

/** A failure our own code decides is a dependency's (e.g. a wait for a database read slot that ran out). */
export class DependencyError extends Error {
  constructor(
    readonly reason: DependencyFailure,
    message: string,
  ) {
    super(message);
    this.name = 'DependencyError';
  }
}

/** Failures that pass by themselves: start-up waits them out; the others mean a wrong setup. */
const TRANSIENT: ReadonlySet<DependencyFailure> = new Set([
  'database_unreachable',
  'database_busy',
  'database_timeout',
]);

type Links = { cause?: unknown; errors?: unknown; meta?: unknown };

function classifyOne(e: object): DependencyFailure | undefined {
  if (e instanceof DependencyError) return e.reason;
  if (e instanceof RateLimitStoreUnavailableError) return 'rate_limit_store';
  return driverFailure(e);
}

/**
 * The dependency failure behind `err`, or undefined when it is something else (a bug, bad input handled elsewhere).
 * The chain of `cause`s, an AggregateError's `errors` and Prisma's `meta.driverAdapterError` are walked to a bounded
 * depth.
 */
export function classifyDependencyError(err: unknown): DependencyFailure | undefined {
  const queue: unknown[] = [err];
  const seen = new Set<unknown>();
  for (let i = 0; i < queue.length && i < 16; i++) {
    const e = queue[i];
    if (typeof e !== 'object' || e === null || seen.has(e)) continue;
    seen.add(e);
    const found = classifyOne(e);
    if (found) return found;
    const links = e as Links;
    if (links.cause !== undefined) queue.push(links.cause);
    if (Array.isArray(links.errors)) queue.push(...(links.errors as unknown[]));
    const meta = links.meta as { driverAdapterError?: unknown } | undefined;
    if (meta && typeof meta === 'object' && meta.driverAdapterError !== undefined) queue.push(meta.driverAdapterError);
  }
  return undefined;
}

/** True when `err` is a dependency failure that may pass by itself (unreachable yet, busy, slow): worth retrying. */
export function isTransient(err: unknown): boolean {
  const failure = classifyDependencyError(err);
  return failure !== undefined && TRANSIENT.has(failure);
}
