import type { BanPolicy, RateLimitStore, StoreResult, WindowLimit } from './types.js';

/** State of one window as seen by one decision. */
export interface WindowState extends WindowLimit {
  /** Requests counted in the current window, including this one if it was allowed. */
  readonly used: number;
  /** `max(0, limit - used)`. */
  readonly remaining: number;
  /** Instant (ms since epoch) at which the current window ends and the counter resets. */
  readonly resetAt: number;
}

/** The limiter's answer for one request. */
export interface RateLimitDecision {
  /** True when the request may proceed (it has been charged to every window). */
  readonly allowed: boolean;
  /** `allowed`, `rate_limited` (a window is full) or `banned`. */
  readonly reason: 'allowed' | 'rate_limited' | 'banned';
  /** The identity the decision is about. */
  readonly key: string;
  /** Store time (ms) of the decision. */
  readonly now: number;
  /** Every window, in the order given. */
  readonly windows: readonly WindowState[];
  /** The most restrictive window: lowest `remaining`; on a tie, the longer window. */
  readonly limiting: WindowState;
  /**
   * Whole seconds (>= 1, rounded up) the client should wait; `null` when allowed.
   * Rate limited: until the refusing window resets (the latest one if several refuse).
   * Banned: until the ban ends.
   */
  readonly retryAfterSeconds: number | null;
  /** End of the ban (ms) when `reason === 'banned'`, else `null`. */
  readonly banUntil: number | null;
  /** True only for the request whose refusal started the ban. */
  readonly banStarted: boolean;
  /** Name of the store that answered (`memory`, `redis`, ...). */
  readonly source: string;
  /** Present when a resilient store answered from its fallback because the primary failed. */
  readonly fallbackError?: unknown;
}

/** Options of {@link createLimiter}. */
export interface LimiterOptions {
  /** Where counters, refusal counters and bans live. */
  readonly store: RateLimitStore;
  /** Temporary-ban policy (numbers, no default: the application decides), or `false` to disable bans. */
  readonly ban: BanPolicy | false;
}

/** The framework-agnostic limiter. */
export interface RateLimiter {
  /** The store this limiter uses. */
  readonly store: RateLimitStore;
  /** The effective ban policy (`null` when disabled). */
  readonly ban: BanPolicy | null;
  /**
   * Checks and (if every window has room) charges one request for `key`, in one atomic store step.
   * Rejects with the store's error (e.g. {@link RateLimitStoreUnavailableError}) or a `RangeError`
   * for invalid windows.
   */
  consume(key: string, windows: readonly WindowLimit[]): Promise<RateLimitDecision>;
  /**
   * `consume` answered synchronously; present only when the store decides in-process (it has `consumeSync`, as the
   * memory store does). Throws what `consume` would reject with.
   */
  readonly consumeSync?: (key: string, windows: readonly WindowLimit[]) => RateLimitDecision;
  /**
   * Takes back the charge of an allowed decision (nothing for a refusal): for a request the service failed to serve
   * for reasons of its own, which must not count against the identity. See `RateLimitStore.refund`.
   */
  refund(decision: RateLimitDecision): Promise<void>;
}

/**
 * Creates a limiter on top of a store.
 *
 * @example
 * const limiter = createLimiter({ store: createMemoryStore(), ban: { maxRefusals: 10, windowMs: 60_000, durationMs: 900_000 } });
 * const decision = await limiter.consume('key_123', minuteAndDay({ perMinute: 60, perDay: 1000 }));
 */
export function createLimiter(options: LimiterOptions): RateLimiter {
  const ban = resolveBan(options.ban);
  const store = options.store;
  const limiter: RateLimiter = {
    store,
    ban,
    async consume(key, windows) {
      validateRequest(key, windows);
      const result = await store.consume({ key, windows, ban });
      return buildDecision(key, windows, result);
    },
    refund: (decision) => refundDecision(store, decision),
  };
  const consumeSync = store.consumeSync?.bind(store);
  if (consumeSync === undefined) return limiter;
  return {
    ...limiter,
    consumeSync(key, windows) {
      validateRequest(key, windows);
      return buildDecision(key, windows, consumeSync({ key, windows, ban }));
    },
  };
}

/** Takes back the charge of an allowed decision in `store` (a refusal charged nothing). */
export async function refundDecision(store: RateLimitStore, decision: RateLimitDecision): Promise<void> {
  if (!decision.allowed) return;
  await store.refund({
    key: decision.key,
    windows: decision.windows,
    at: decision.now,
    fallback: decision.fallbackError !== undefined,
  });
}

function resolveBan(ban: BanPolicy | false): BanPolicy | null {
  if (ban === false) return null;
  const policy: BanPolicy = { ...ban };
  if (!Number.isSafeInteger(policy.maxRefusals) || policy.maxRefusals < 0) {
    throw new RangeError(`ban.maxRefusals must be an integer >= 0, got ${policy.maxRefusals}`);
  }
  if (!Number.isSafeInteger(policy.windowMs) || policy.windowMs <= 0) {
    throw new RangeError(`ban.windowMs must be a positive integer, got ${policy.windowMs}`);
  }
  if (!Number.isSafeInteger(policy.durationMs) || policy.durationMs <= 0) {
    throw new RangeError(`ban.durationMs must be a positive integer, got ${policy.durationMs}`);
  }
  return Object.freeze(policy);
}

function validateRequest(key: string, windows: readonly WindowLimit[]): void {
  if (typeof key !== 'string' || key.length === 0) {
    throw new RangeError('Rate-limit key must be a non-empty string');
  }
  if (windows.length === 0) throw new RangeError('At least one window is required');
  for (let i = 0; i < windows.length; i++) {
    const w = windows[i]!;
    if (!Number.isSafeInteger(w.limit) || w.limit < 0) {
      throw new RangeError(`Window "${w.name}": limit must be an integer >= 0, got ${w.limit}`);
    }
    if (!Number.isSafeInteger(w.windowMs) || w.windowMs <= 0) {
      throw new RangeError(`Window "${w.name}": windowMs must be a positive integer, got ${w.windowMs}`);
    }
    for (let j = 0; j < i; j++) {
      if (windows[j]!.windowMs === w.windowMs) {
        throw new RangeError(`Two windows have the same length (${w.windowMs} ms)`);
      }
    }
  }
}

/** A window's state at `now` when its current (clock-aligned) window has counted `used` requests. */
export function windowState(w: WindowLimit, used: number, now: number): WindowState {
  return {
    name: w.name,
    limit: w.limit,
    windowMs: w.windowMs,
    used,
    remaining: Math.max(0, w.limit - used),
    resetAt: Math.floor(now / w.windowMs) * w.windowMs + w.windowMs,
  };
}

/** Seconds from `now` to `until`, rounded up, at least 1. */
export function secondsUntil(now: number, until: number): number {
  return Math.max(1, Math.ceil((until - now) / 1000));
}

function buildDecision(key: string, windows: readonly WindowLimit[], result: StoreResult): RateLimitDecision {
  const now = result.now;
  const states: WindowState[] = [];
  let limiting: WindowState | undefined;
  let refusedResetAt = -Infinity;
  for (let i = 0; i < windows.length; i++) {
    const w = windows[i]!;
    const state = windowState(w, result.counts[i] ?? 0, now);
    const { used, resetAt } = state;
    states.push(state);
    if (
      limiting === undefined ||
      state.remaining < limiting.remaining ||
      (state.remaining === limiting.remaining && state.windowMs > limiting.windowMs)
    ) {
      limiting = state;
    }
    // A refused request was not charged: the window refused if one more would not fit.
    if (result.outcome === 'refused' && used + 1 > w.limit && resetAt > refusedResetAt) {
      refusedResetAt = resetAt;
    }
  }

  let reason: RateLimitDecision['reason'];
  let retryAfterSeconds: number | null = null;
  if (result.outcome === 'allowed') {
    reason = 'allowed';
  } else if (result.outcome === 'banned') {
    reason = 'banned';
    retryAfterSeconds = secondsUntil(now, result.banUntil ?? now);
  } else {
    reason = 'rate_limited';
    retryAfterSeconds = secondsUntil(now, refusedResetAt === -Infinity ? now : refusedResetAt);
  }

  const decision: RateLimitDecision = {
    allowed: result.outcome === 'allowed',
    reason,
    key,
    now,
    windows: states,
    limiting: limiting!,
    retryAfterSeconds,
    banUntil: result.outcome === 'banned' ? result.banUntil : null,
    banStarted: result.banStarted,
    source: result.source,
    ...(result.fallbackError !== undefined ? { fallbackError: result.fallbackError } : {}),
  };
  return decision;
}
