import type { SpanContext } from '@opentelemetry/api';
import { dbSharedWork, memberContext, type DbOperation } from '../telemetry/db-telemetry.js';

/** What one member of a batch came to: its own value or its own error. */
export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

export interface BatchOptions {
  /** Members of one batch at most (the rest wait for the next). */
  maxBatch: number;
  /** Batches running at once (1 for SQLite's writer, which commits synchronously). */
  maxInFlight: number;
  /** The database work a batch is: one span linked to the sampled requests it serves, and the duration metric. */
  operation?: DbOperation;
}

/**
 * Calls that arrive together run as one batch: the writers' group commit (one fsync, one round trip for many creates)
 * and PostgreSQL's coalesced reads (one query for many pages). A batch takes the calls of the current event-loop turn
 * and those that queued while `maxInFlight` batches were running; `run` settles each member on its own, and each call
 * is answered only once its batch's `run` has returned, so a caller never learns of a write that is not committed. A
 * `run` that throws fails every member of its batch with that error.
 */
export interface Batches<I, O> {
  /** Queues `item` for the next batch; settles with its own outcome once that batch has run. */
  submit: (item: I) => Promise<O>;
  /** Resolves once nothing is queued or running (before closing the connection). */
  idle: () => Promise<void>;
}

type Entry<I, O> = { item: I; resolve: (value: O) => void; reject: (error: unknown) => void; trace?: SpanContext };

/** Each member's own outcome to its caller. */
function settleEach<I, O>(batch: readonly Entry<I, O>[], results: readonly Settled<O>[]): void {
  batch.forEach((entry, i) => {
    const result = results[i];
    if (result === undefined) entry.reject(new Error('a batch returned no result for a member'));
    else if (result.ok) entry.resolve(result.value);
    else entry.reject(result.error);
  });
}

/** Runs one batch, in a span of shared work when `operation` names one; a synchronous throw becomes a rejection. */
function runBatch<I, O>(
  run: (items: readonly I[]) => Promise<Settled<O>[]>,
  batch: readonly Entry<I, O>[],
  operation: BatchOptions['operation'],
): Promise<Settled<O>[]> {
  try {
    const items = batch.map((entry) => entry.item);
    return operation
      ? dbSharedWork(
          operation,
          batch.map((entry) => entry.trace),
          () => run(items),
        )
      : run(items);
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

export function batches<I, O>(
  run: (items: readonly I[]) => Promise<Settled<O>[]>,
  options: BatchOptions,
): Batches<I, O> {
  let queue: Entry<I, O>[] = [];
  let scheduled = false;
  let inFlight = 0;
  let idleWaiters: Array<() => void> = [];

  const wakeIdleWaiters = () => {
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const wake of waiters) wake();
  };
  const schedule = () => {
    if (scheduled || inFlight >= options.maxInFlight || queue.length === 0) return;
    scheduled = true;
    // After the I/O of this turn: every request that arrived with this one joins its batch.
    setImmediate(flush);
  };
  const flush = () => {
    scheduled = false;
    if (inFlight >= options.maxInFlight || queue.length === 0) return;
    const batch = queue.length <= options.maxBatch ? queue : queue.slice(0, options.maxBatch);
    queue = queue.length <= options.maxBatch ? [] : queue.slice(options.maxBatch);
    inFlight++;
    runBatch(run, batch, options.operation)
      .then(
        (results) => settleEach(batch, results),
        (error: unknown) => {
          for (const entry of batch) entry.reject(error);
        },
      )
      .finally(() => {
        inFlight--;
        schedule();
        if (inFlight === 0 && queue.length === 0) wakeIdleWaiters();
      })
      .catch(() => undefined);
    schedule();
  };

  return {
    submit: (item) =>
      new Promise<O>((resolve, reject) => {
        queue.push({ item, resolve, reject, trace: options.operation && memberContext() });
        schedule();
      }),
    idle: () =>
      inFlight === 0 && queue.length === 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => idleWaiters.push(resolve)),
  };
}
