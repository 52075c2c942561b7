import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ApiKeyStore, Database } from '../db/types.js';
import type { Logger } from '../logger.js';

const MINUTE_MS = 60_000;
/** How often noted uses are written (a key's `lastUsedAt` is at most this much behind, on top of its minute). */
export const LAST_USED_FLUSH_MS = 15_000;
/**
 * Keys per write statement. A flush writes every key used in a new minute, thousands at once on a busy service, and
 * SQLite's write runs on the event loop: in statements of this many keys with a turn of the loop between them, no
 * request waits behind more than one.
 */
const LAST_USED_CHUNK = 500;

/** What is noted per key: any accepted request (`lastUsedAt`), a call of a deprecated operation (`lastDeprecatedCallAt`). */
export type UseKind = 'use' | 'deprecatedCall';
type Writer = Pick<ApiKeyStore, 'recordLastUsed' | 'recordLastDeprecatedCall'>;

/**
 * Records each key's last use (and last call of a deprecated operation) to the minute without a database write per
 * request: a request notes its key's current minute in memory (once per key, kind and minute), and `flush()` writes
 * the noted keys in one statement per kind, minute value and `chunk` keys, at most every `intervalMs`. A write only
 * moves the time forward, so replicas flushing in any order agree.
 */
export class LastUsedRecorder {
  /** Per kind: key id -> minute (ms) noted and not yet written. */
  #pending: Record<UseKind, Map<number, number>> = { use: new Map(), deprecatedCall: new Map() };
  /** Per kind: key id -> last minute noted, so a key's further requests in that minute cost one map read. */
  readonly #noted: Record<UseKind, Map<number, number>> = { use: new Map(), deprecatedCall: new Map() };
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(
    private readonly store: Writer,
    private readonly options: {
      intervalMs: number;
      /** Keys per write statement (LAST_USED_CHUNK). */
      chunk?: number;
      now?: () => number;
      onError?: (err: unknown) => void;
    },
  ) {}

  /** Notes a use of the key now (`deprecatedCall`: a call of a deprecated operation). */
  record(keyId: number, kind: UseKind = 'use'): void {
    const minute = Math.floor((this.options.now ?? Date.now)() / MINUTE_MS) * MINUTE_MS;
    if (this.#noted[kind].get(keyId) === minute) return;
    this.#noted[kind].set(keyId, minute);
    this.#pending[kind].set(keyId, minute);
    this.#arm();
  }

  #arm(): void {
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.flush().catch((err: unknown) => this.options.onError?.(err));
    }, this.options.intervalMs).unref();
  }

  /**
   * Writes what was noted: per kind and distinct minute, one statement per `chunk` keys in ascending id order, the
   * event loop running between statements. Flushes run one after another. In id order, each statement updates
   * neighbouring rows (SQLite keeps a table in rowid order) rather than keys in the order they were first used, so on
   * SQLite a page is written once per flush instead of once per statement that touches it: fewer WAL pages, and so
   * fewer checkpoints, which run on the event loop.
   */
  flush(): Promise<void> {
    const run = this.#flushing.then(async () => {
      await this.#write('use', (at, ids) => this.store.recordLastUsed(at, ids));
      await this.#write('deprecatedCall', (at, ids) => this.store.recordLastDeprecatedCall(at, ids));
    });
    this.#flushing = run.catch(() => undefined);
    return run;
  }

  async #write(kind: UseKind, write: (at: Date, ids: readonly number[]) => Promise<void>): Promise<void> {
    const pending = this.#pending[kind];
    if (pending.size === 0) return;
    this.#pending[kind] = new Map();
    const byMinute = new Map<number, number[]>();
    for (const [id, minute] of pending) {
      const ids = byMinute.get(minute);
      if (ids) ids.push(id);
      else byMinute.set(minute, [id]);
    }
    // Keys noted in an older minute will be noted again on their next use: forget them so the map stays bounded.
    const latest = Math.max(...byMinute.keys());
    for (const [id, minute] of this.#noted[kind]) if (minute < latest) this.#noted[kind].delete(id);
    try {
      const chunk = this.options.chunk ?? LAST_USED_CHUNK;
      let written = 0;
      for (const [minute, ids] of byMinute) {
        ids.sort((a, b) => a - b);
        for (let i = 0; i < ids.length; i += chunk) {
          if (written++ > 0) await nextTurn();
          await write(new Date(minute), ids.slice(i, i + chunk));
        }
      }
    } catch (err) {
      // Keep what failed for the next flush (a newer minute noted meanwhile wins).
      for (const [id, minute] of pending) if (!this.#pending[kind].has(id)) this.#pending[kind].set(id, minute);
      if (!this.#closed) this.#arm();
      throw err;
    }
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }
}

/** The recorder of a database's keys, logging (and retrying) what it could not write. */
export function lastUsedRecorder(db: Pick<Database, 'apiKeys'>, logger: Logger, now?: () => number): LastUsedRecorder {
  return new LastUsedRecorder(db.apiKeys, {
    intervalMs: LAST_USED_FLUSH_MS,
    ...(now && { now }),
    onError: (err) =>
      logger.warn({ err: (err as Error).message }, 'could not record when keys were last used; retrying'),
  });
}
