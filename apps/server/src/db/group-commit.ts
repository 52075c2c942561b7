/** What one member of a batch came to: its own value or its own error. */
export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

export interface GroupCommitOptions {
  /** Members of one batch at most (the rest wait for the next). */
  maxBatch: number;
  /** Batches committing at once (1 for SQLite, whose one writer commits synchronously). */
  maxInFlight: number;
}

/**
 * Group commit: calls that arrive together share one commit (one fsync, one round trip). A batch takes the calls of
 * the current event-loop turn and those that queued while the previous batch was committing; `commit` settles each
 * member on its own, and each call is answered only once its batch's `commit` has returned, so a caller never learns
 * of a write that is not committed. A `commit` that throws fails every member of its batch with that error.
 */
export interface GroupCommit<I, O> {
  /** Queues `item` for the next batch; settles with its own outcome once that batch has committed. */
  submit: (item: I) => Promise<O>;
  /** Resolves once nothing is queued or committing (before closing the connection). */
  idle: () => Promise<void>;
}

export function groupCommit<I, O>(
  commit: (items: readonly I[]) => Promise<Settled<O>[]>,
  options: GroupCommitOptions,
): GroupCommit<I, O> {
  type Entry = { item: I; resolve: (value: O) => void; reject: (error: unknown) => void };
  let queue: Entry[] = [];
  let scheduled = false;
  let inFlight = 0;
  let idleWaiters: Array<() => void> = [];

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
    let settled: Promise<Settled<O>[]>;
    try {
      settled = commit(batch.map((entry) => entry.item));
    } catch (error) {
      settled = Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    settled
      .then(
        (results) => {
          batch.forEach((entry, i) => {
            const result = results[i];
            if (result === undefined) entry.reject(new Error('group commit returned no result for a member'));
            else if (result.ok) entry.resolve(result.value);
            else entry.reject(result.error);
          });
        },
        (error: unknown) => {
          for (const entry of batch) entry.reject(error);
        },
      )
      .finally(() => {
        inFlight--;
        schedule();
        if (inFlight === 0 && queue.length === 0) {
          const waiters = idleWaiters;
          idleWaiters = [];
          for (const wake of waiters) wake();
        }
      })
      .catch(() => undefined);
    schedule();
  };

  return {
    submit: (item) =>
      new Promise<O>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        schedule();
      }),
    idle: () =>
      inFlight === 0 && queue.length === 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => idleWaiters.push(resolve)),
  };
}
