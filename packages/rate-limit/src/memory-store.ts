import type { BanPolicy, RateLimitStore, RefundRequest, StoreRequest, StoreResult, WindowLimit } from './types.js';

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /** Clock in ms since the epoch. Defaults to `Date.now`. Inject for tests. */
  readonly now?: () => number;
  /**
   * Maximum number of identities kept (default 100 000). When a new identity
   * arrives at capacity, expired entries are removed first; if none is expired,
   * the least recently used identity is evicted (its counters restart from zero).
   */
  readonly maxKeys?: number;
  /** Entries inspected by the incremental sweep on each call (default 2). */
  readonly sweepBatch?: number;
}

/** The in-process store; see {@link createMemoryStore}. */
export interface MemoryStore extends RateLimitStore {
  readonly name: 'memory';
  /** Decides in-process, so it answers synchronously too (`consume` wraps it in a promise). */
  consumeSync(request: StoreRequest): StoreResult;
  /** Number of identities currently held. */
  readonly size: number;
  /** Removes every expired entry now (O(n)); returns how many were removed. */
  sweep(): number;
  /** Drops all state. */
  clear(): void;
}

interface Counter {
  windowMs: number;
  start: number;
  count: number;
}

interface Entry {
  counters: Counter[];
  refusalStart: number;
  refusalCount: number;
  banUntil: number;
  /** From this instant on the entry is indistinguishable from no entry at all. */
  expiresAt: number;
}

/**
 * Creates the embedded in-memory store (single process).
 *
 * - Same semantics as the Redis store (shared contract tests).
 * - Bounded: at most `maxKeys` identities (expired first, then least recently used, are evicted).
 * - No timers: expired entries are swept incrementally (a few per call, round-robin)
 *   and fully when the store is at capacity, so it never keeps the process alive.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  return new MemoryStoreImpl(options);
}

class MemoryStoreImpl implements MemoryStore {
  readonly name = 'memory' as const;
  private readonly clock: () => number;
  private readonly maxKeys: number;
  private readonly sweepBatch: number;
  /** Insertion order == least recently used first (entries are re-inserted on write). */
  private readonly entries = new Map<string, Entry>();
  private cursor: Iterator<[string, Entry]> | null = null;
  /** Lower bound of every entry's `expiresAt` (a full sweep before it would find nothing). */
  private earliestExpiry = Infinity;

  constructor(options: MemoryStoreOptions) {
    this.clock = options.now ?? Date.now;
    this.maxKeys = options.maxKeys ?? 100_000;
    this.sweepBatch = options.sweepBatch ?? 2;
    if (!Number.isSafeInteger(this.maxKeys) || this.maxKeys < 1) {
      throw new RangeError(`maxKeys must be a positive integer, got ${options.maxKeys}`);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  consume(request: StoreRequest): Promise<StoreResult> {
    try {
      return Promise.resolve(this.consumeSync(request));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  refund(request: RefundRequest): Promise<void> {
    const entry = this.entries.get(request.key);
    if (entry !== undefined) {
      for (const w of request.windows) {
        const c = findCounter(entry, w.windowMs);
        if (c !== undefined && c.start === request.at - (request.at % w.windowMs) && c.count > 0) c.count--;
      }
    }
    return Promise.resolve();
  }

  resetKey(key: string): Promise<void> {
    this.entries.delete(key);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.clear();
    return Promise.resolve();
  }

  consumeSync(request: StoreRequest): StoreResult {
    const now = this.clock();
    const { key, windows, ban } = request;
    this.sweepStep(now);

    let entry = this.entries.get(key);
    if (entry !== undefined && now >= entry.expiresAt) {
      this.entries.delete(key);
      entry = undefined;
    }

    const counts: number[] = new Array<number>(windows.length);
    let fits = true;
    for (let i = 0; i < windows.length; i++) {
      const w = windows[i]!;
      const c = entry === undefined ? undefined : findCounter(entry, w.windowMs);
      const start = now - (now % w.windowMs);
      const count = c !== undefined && c.start === start ? c.count : 0;
      counts[i] = count;
      if (count + 1 > w.limit) fits = false;
    }

    if (entry !== undefined && now < entry.banUntil) {
      return { outcome: 'banned', now, counts, banUntil: entry.banUntil, banStarted: false, source: this.name };
    }

    if (fits) return this.charge(key, entry ?? this.insert(key, now), windows, counts, now);
    if (ban === null) {
      return { outcome: 'refused', now, counts, banUntil: null, banStarted: false, source: this.name };
    }
    return this.countRefusal(key, entry ?? this.insert(key, now), ban, counts, now);
  }

  /** Charges every window (`counts` holds their counts before, and gets those after). */
  private charge(
    key: string,
    entry: Entry,
    windows: readonly WindowLimit[],
    counts: number[],
    now: number,
  ): StoreResult {
    for (let i = 0; i < windows.length; i++) {
      const w = windows[i]!;
      const start = now - (now % w.windowMs);
      const count = counts[i]! + 1;
      counts[i] = count;
      const c = findCounter(entry, w.windowMs);
      if (c === undefined) entry.counters.push({ windowMs: w.windowMs, start, count });
      else {
        c.start = start;
        c.count = count;
      }
      this.extend(entry, start + w.windowMs);
    }
    this.touch(key, entry);
    return { outcome: 'allowed', now, counts, banUntil: null, banStarted: false, source: this.name };
  }

  /** Counts a refusal in the ban's window; the one that exceeds `maxRefusals` starts the ban. */
  private countRefusal(key: string, entry: Entry, ban: BanPolicy, counts: number[], now: number): StoreResult {
    const refusalStart = now - (now % ban.windowMs);
    const refusals = (entry.refusalStart === refusalStart ? entry.refusalCount : 0) + 1;
    if (refusals > ban.maxRefusals) {
      entry.banUntil = now + ban.durationMs;
      entry.refusalStart = -1;
      entry.refusalCount = 0;
      this.extend(entry, entry.banUntil);
      this.touch(key, entry);
      return { outcome: 'banned', now, counts, banUntil: entry.banUntil, banStarted: true, source: this.name };
    }
    entry.refusalStart = refusalStart;
    entry.refusalCount = refusals;
    this.extend(entry, refusalStart + ban.windowMs);
    this.touch(key, entry);
    return { outcome: 'refused', now, counts, banUntil: null, banStarted: false, source: this.name };
  }

  sweep(): number {
    return this.fullSweep(this.clock());
  }

  clear(): void {
    this.entries.clear();
    this.cursor = null;
    this.earliestExpiry = Infinity;
  }

  private extend(entry: Entry, until: number): void {
    if (until > entry.expiresAt) entry.expiresAt = until;
    if (until < this.earliestExpiry) this.earliestExpiry = until;
  }

  /** Moves the entry to the most-recently-used end. */
  private touch(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
  }

  private insert(key: string, now: number): Entry {
    if (this.entries.size >= this.maxKeys) {
      if (now >= this.earliestExpiry) this.fullSweep(now);
      while (this.entries.size >= this.maxKeys) {
        const oldest = this.entries.keys().next();
        if (oldest.done === true) break;
        this.entries.delete(oldest.value);
      }
    }
    const entry: Entry = { counters: [], refusalStart: -1, refusalCount: 0, banUntil: 0, expiresAt: now };
    this.entries.set(key, entry);
    return entry;
  }

  /** Inspects a few entries, round-robin, and deletes the expired ones. */
  private sweepStep(now: number): void {
    for (let i = 0; i < this.sweepBatch; i++) {
      this.cursor ??= this.entries.entries();
      const next = this.cursor.next();
      if (next.done === true) {
        this.cursor = null;
        return;
      }
      const [key, entry] = next.value;
      if (now >= entry.expiresAt) this.entries.delete(key);
    }
  }

  private fullSweep(now: number): number {
    let removed = 0;
    let earliest = Infinity;
    for (const [key, entry] of this.entries) {
      if (now >= entry.expiresAt) {
        this.entries.delete(key);
        removed++;
      } else if (entry.expiresAt < earliest) {
        earliest = entry.expiresAt;
      }
    }
    this.earliestExpiry = earliest;
    return removed;
  }
}

function findCounter(entry: Entry, windowMs: number): Counter | undefined {
  const counters = entry.counters;
  for (let i = 0; i < counters.length; i++) {
    if (counters[i]!.windowMs === windowMs) return counters[i];
  }
  return undefined;
}
