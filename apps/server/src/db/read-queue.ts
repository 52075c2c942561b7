import { DatabaseBusyError } from './busy-error.js';

/**
 * A queue for reads on a connection pool: at most `concurrency` queries in flight, and identical reads (same key) that
 * wait share one query.
 *
 * A batch stays open until the I/O of the current turn of the event loop has been handled (so identical reads of
 * requests that arrived together share, even when a connection is free), then until it has a slot and a connection;
 * then it closes and its query is sent. Every read in a batch arrived before its query was sent, so each answer is at
 * least as fresh as a query of its own would have been. Under light load a batch is one read and nothing waits; under
 * load the queue holds one query per distinct read instead of one per request. See BENCHMARKS.md for the figures.
 */
export interface ReadQueue<Connection, T> {
  /** The answer of `query` for `key`, from a query sent after this call, possibly shared with identical reads. */
  read(key: string, query: (connection: Connection) => Promise<T>): Promise<T>;
  /** Reads answered, and queries sent for them (fewer when identical reads shared one). */
  readonly stats: { readonly reads: number; readonly queries: number };
}

export interface ReadQueueOptions<Connection> {
  /** Queries in flight at once; further batches wait for a slot. */
  concurrency: number;
  /**
   * Longest wait for a slot (ms; default: none). When the database is slow the queue must not grow without bound: a
   * batch that waited longer fails with {@link DatabaseBusyError} (503, retried by the client).
   */
  slotTimeoutMs?: number;
  connect(): Promise<Connection>;
  /** Gives the connection back; `err` when its query failed (the pool then does not reuse it). */
  release(connection: Connection, err?: Error): void;
}

/** Resolves once the I/O of the current turn of the event loop has been handled. */
const endOfTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export function createReadQueue<Connection, T>(options: ReadQueueOptions<Connection>): ReadQueue<Connection, T> {
  let inFlight = 0;
  const waiting = new Set<() => void>();
  const acquire = (): Promise<void> => {
    if (inFlight < options.concurrency) {
      inFlight++;
      return Promise.resolve();
    }
    const timeoutMs = options.slotTimeoutMs;
    if (timeoutMs === undefined) return new Promise((resolve) => waiting.add(resolve));
    return new Promise((resolve, reject) => {
      const granted = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        waiting.delete(granted);
        reject(new DatabaseBusyError(`no read slot within ${timeoutMs} ms`));
      }, timeoutMs);
      waiting.add(granted);
    });
  };
  const releaseSlot = () => {
    const next = waiting.values().next();
    if (next.done) {
      inFlight--;
      return;
    }
    waiting.delete(next.value);
    next.value();
  };

  const open = new Map<string, Promise<T>>();
  const stats = { reads: 0, queries: 0 };
  const read = (key: string, query: (connection: Connection) => Promise<T>): Promise<T> => {
    stats.reads++;
    const joined = open.get(key);
    if (joined !== undefined) return joined;
    stats.queries++;
    const close = () => open.get(key) === batch && open.delete(key);
    const batch: Promise<T> = endOfTurn()
      .then(acquire)
      .then(
        async () => {
          try {
            // Closed once it has a connection (or failed to get one): later reads wait for a query sent after they arrived.
            const connection = await options.connect().finally(close);
            try {
              const answer = await query(connection);
              options.release(connection);
              return answer;
            } catch (err) {
              options.release(connection, err as Error);
              throw err;
            }
          } finally {
            releaseSlot();
          }
        },
        (err: unknown) => {
          close(); // no slot in time: later reads must not join this failed batch
          throw err;
        },
      );
    open.set(key, batch);
    return batch;
  };
  return { read, stats };
}
