import type { ApiKeyStore } from '../db/types.js';

const MINUTE_MS = 60_000;
/** How often noted uses are written (a key's `lastUsedAt` is at most this much behind, on top of its minute). */
export const LAST_USED_FLUSH_MS = 15_000;

/**
 * Records each key's last use to the minute without a database write per request: a request notes its key's current
 * minute in memory (once per key and minute), and `flush()` writes the noted keys in one statement per minute value,
 * at most every `intervalMs`. A write only moves `lastUsedAt` forward, so replicas flushing in any order agree.
 */
export class LastUsedRecorder {
  /** Key id -> minute (ms) noted and not yet written. */
  #pending = new Map<number, number>();
  /** Key id -> last minute noted, so a key's further requests in that minute cost one map read. */
  readonly #noted = new Map<number, number>();
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(
    private readonly store: Pick<ApiKeyStore, 'recordLastUsed'>,
    private readonly options: { intervalMs: number; now?: () => number; onError?: (err: unknown) => void },
  ) {}

  /** Notes a use of the key now. */
  record(keyId: number): void {
    const minute = Math.floor((this.options.now ?? Date.now)() / MINUTE_MS) * MINUTE_MS;
    if (this.#noted.get(keyId) === minute) return;
    this.#noted.set(keyId, minute);
    this.#pending.set(keyId, minute);
    this.#arm();
  }

  #arm(): void {
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.flush().catch((err: unknown) => this.options.onError?.(err));
    }, this.options.intervalMs).unref();
  }

  /** Writes what was noted (one statement per distinct minute). Flushes run one after another. */
  flush(): Promise<void> {
    const run = this.#flushing.then(() => this.#write());
    this.#flushing = run.catch(() => undefined);
    return run;
  }

  async #write(): Promise<void> {
    const pending = this.#pending;
    if (pending.size === 0) return;
    this.#pending = new Map();
    const byMinute = new Map<number, number[]>();
    for (const [id, minute] of pending) {
      const ids = byMinute.get(minute);
      if (ids) ids.push(id);
      else byMinute.set(minute, [id]);
    }
    // Keys noted in an older minute will be noted again on their next use: forget them so the map stays bounded.
    const latest = Math.max(...byMinute.keys());
    for (const [id, minute] of this.#noted) if (minute < latest) this.#noted.delete(id);
    try {
      for (const [minute, ids] of byMinute) await this.store.recordLastUsed(new Date(minute), ids);
    } catch (err) {
      // Keep what failed for the next flush (a newer minute noted meanwhile wins).
      for (const [id, minute] of pending) if (!this.#pending.has(id)) this.#pending.set(id, minute);
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
