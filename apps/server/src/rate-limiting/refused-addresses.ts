import type { RateLimitDecision } from '@animal-store/rate-limit';

/**
 * Client addresses this process has seen refused (over the keyless limit, or banned), until their refusal ends. A key
 * that needs a database lookup from such an address is checked against the address's limit first, so a banned address
 * sending invented keys costs no database query. Per process and bounded: the oldest entry goes first; an entry ends
 * at the window's reset or the ban's end.
 */
export class RefusedAddresses {
  readonly #entries = new Map<string, { until: number; decision: RateLimitDecision }>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 10_000,
  ) {}

  /** Remembers a refusal of an address identity (`decision.allowed` false). */
  remember(address: string, decision: RateLimitDecision): void {
    if (decision.allowed) return;
    const until = decision.banUntil ?? decision.now + (decision.retryAfterSeconds ?? 1) * 1000;
    this.#entries.delete(address);
    if (this.#entries.size >= this.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(address, { until, decision });
  }

  /** The refusal still in force for the address, restated for now (Retry-After counts down); undefined if none. */
  check(address: string): RateLimitDecision | undefined {
    if (this.#entries.size === 0) return undefined;
    const entry = this.#entries.get(address);
    if (!entry) return undefined;
    const now = this.now();
    if (entry.until <= now) {
      this.#entries.delete(address);
      return undefined;
    }
    // Shift the decision to now: the same windows and ban, seen `now - decision.now` ms later.
    const { decision } = entry;
    return {
      ...decision,
      now,
      retryAfterSeconds: Math.max(1, Math.ceil((entry.until - now) / 1000)),
      banStarted: false,
    };
  }
}
