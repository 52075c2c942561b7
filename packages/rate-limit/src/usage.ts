import { windowState, type WindowState } from './limiter.js';
import type { RateLimitStore, WindowLimit } from './types.js';

/** An identity's windows and ban as they stand, read without charging anything. */
export interface UsageSnapshot {
  /** Store time (ms) of the reading. */
  readonly now: number;
  /** Every window, in the order given; `used` is what the current window has counted. */
  readonly windows: readonly WindowState[];
  /** End of the ban (ms) while the identity is banned, else `null`. */
  readonly banUntil: number | null;
}

/**
 * Reads an identity's counters and ban without charging a request. It is one ordinary store step with every limit at
 * 0 and bans off: such a step can only be refused, and a refused step charges no window and (with bans off) counts no
 * refusal, while it still reports the counts and an active ban. Every store that keeps the store contract can answer it.
 */
export async function readUsage(
  store: RateLimitStore,
  key: string,
  windows: readonly WindowLimit[],
): Promise<UsageSnapshot> {
  const probe = windows.map((w) => ({ name: w.name, limit: 0, windowMs: w.windowMs }));
  const result = await store.consume({ key, windows: probe, ban: null });
  return {
    now: result.now,
    windows: windows.map((w, i) => windowState(w, result.counts[i] ?? 0, result.now)),
    banUntil: result.outcome === 'banned' ? result.banUntil : null,
  };
}
