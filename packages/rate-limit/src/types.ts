/**
 * Shared types of the rate limiter. Everything here is plain data so that the
 * core stays framework- and storage-agnostic.
 */

/** One fixed, clock-aligned window: at most `limit` requests per `windowMs`. */
export interface WindowLimit {
  /** Name used in the IETF `RateLimit` / `RateLimit-Policy` headers, e.g. `"minute"`. */
  readonly name: string;
  /** Maximum number of requests allowed in one window (integer >= 0). */
  readonly limit: number;
  /**
   * Window length in milliseconds (positive integer). Windows are aligned to the
   * Unix epoch: `start = floor(now / windowMs) * windowMs`, so a 60 000 ms window
   * is the clock minute and an 86 400 000 ms window is the UTC day.
   * Counters are keyed by `windowMs`, so two windows of one request must differ in length.
   */
  readonly windowMs: number;
}

/** Temporary-ban policy applied to identities that keep calling while refused. */
export interface BanPolicy {
  /**
   * Number of refused requests tolerated per ban-counting window. The refusal
   * that makes the count exceed this value (the 11th, for 10) starts the ban.
   */
  readonly maxRefusals: number;
  /** Length of the clock-aligned window in which refusals are counted, e.g. 60 000 ms (the clock minute). */
  readonly windowMs: number;
  /** Ban duration in milliseconds, e.g. 900 000 ms (15 min). */
  readonly durationMs: number;
}

/** Where a store's answer came from: every store's result says it (rate limits and concurrency alike). */
export interface StoreAnswer {
  /** Name of the store that answered (`"memory"`, `"redis"`, ...). */
  readonly source: string;
  /** Set by a resilient store when the primary failed and the fallback answered. */
  readonly fallbackError?: unknown;
}

/** What every store is: a name for its answers' `source`, and connections to release. */
export interface NamedStore {
  /** Short name reported in its answers' `source`. */
  readonly name: string;
  /** Releases what the store holds (connections); it is not used afterwards. */
  close(): Promise<void>;
}

/** What the limiter asks a store to do, atomically. */
export interface StoreRequest {
  /** Identity (API key id, `ip:<address>`, ...). */
  readonly key: string;
  /** Windows to check and charge (validated by the limiter). */
  readonly windows: readonly WindowLimit[];
  /** Ban policy, or `null` to disable bans. */
  readonly ban: BanPolicy | null;
}

/**
 * Outcome of one atomic store step.
 *
 * - `allowed`: every window had room and every window was charged.
 * - `refused`: at least one window was full; nothing was charged; the refusal counter was incremented.
 * - `banned`: the identity is banned (or this very refusal started the ban); nothing was charged.
 */
export interface StoreResult extends StoreAnswer {
  readonly outcome: 'allowed' | 'refused' | 'banned';
  /** Store time in ms used for this decision (Redis `TIME` for the Redis store). */
  readonly now: number;
  /**
   * Per window (same order as the request), the count of the current window
   * AFTER this request: charged when allowed, unchanged otherwise.
   */
  readonly counts: readonly number[];
  /** When banned: the instant (ms) the ban ends. Otherwise `null`. */
  readonly banUntil: number | null;
  /** True only on the refusal that started the ban. */
  readonly banStarted: boolean;
}

/**
 * One charge taken back: the request charged to `key` at store time `at` was not served for a reason of the service's
 * own (a dependency failed), so it must not count against the identity. See {@link RateLimitStore.refund}.
 */
export interface RefundRequest {
  readonly key: string;
  /** The windows the charge was made in. */
  readonly windows: readonly WindowLimit[];
  /** Store time (ms) of the charge: only a window that `at` still falls in is refunded. */
  readonly at: number;
  /** The charge was made in a resilient store's fallback (during an outage of its primary). */
  readonly fallback?: boolean;
}

/**
 * A storage backend. Implementations MUST perform the whole step (ban check,
 * check of every window, charge of every window or of none, refusal counting and
 * ban start) atomically with respect to other calls for the same key.
 */
export interface RateLimitStore extends NamedStore {
  /** Performs one atomic check-and-charge step. */
  consume(request: StoreRequest): Promise<StoreResult>;
  /**
   * The same step answered synchronously, for stores that decide in-process (the memory store). When present, the
   * limiter and the middleware use it and skip a promise per request; it must agree with `consume` in every way.
   */
  consumeSync?(request: StoreRequest): StoreResult;
  /**
   * Takes back one charge: each window's counter goes down by one if the window is still the one `at` fell in and its
   * count is above zero (a window that moved on was reset anyway). Refusals and bans are never touched.
   */
  refund(request: RefundRequest): Promise<void>;
  /** Forgets one identity: its counters in every window, its refusals and its ban (an operator lifting a ban). */
  resetKey(key: string): Promise<void>;
}
