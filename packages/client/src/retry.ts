/** When and how long to wait before sending a request again. */

export interface RetryOptions {
  /** Retries after the first attempt (0 turns retrying off). Default 3. */
  maxRetries?: number;
  /** First backoff ceiling in ms; it doubles with each retry (exponential backoff, full jitter). Default 250. */
  baseDelayMs?: number;
  /** Upper bound of any single wait, `Retry-After` included. Default 30 000. */
  maxDelayMs?: number;
  /** Randomness in [0, 1) for the jitter. Default `Math.random`; inject a fixed one in tests. */
  random?: () => number;
  /** Told before each wait: for logging or metrics. Never carries the API key. */
  onRetry?: (event: RetryEvent) => void;
  /**
   * The retry budget: retries at most `ratio` of the calls made over a sliding window, plus `minPerSecond`, so that
   * clients cannot multiply an overload. Default `{ ratio: 0.1, minPerSecond: 1, windowMs: 10000 }`; pass a budget from
   * {@link createRetryBudget} to share one between clients of the same service, or `false` for none.
   */
  budget?: RetryBudgetOptions | RetryBudget | false;
  /** Told when a retry was due but the budget was spent, so the answer or error is returned at once. */
  onBudgetExhausted?: (event: Omit<RetryEvent, 'delayMs'>) => void;
  /** Clock in ms for the budget's window and HTTP-date `Retry-After`. Default `Date.now`; inject one in tests. */
  now?: () => number;
}

export type RetryReason = 'rate-limited' | 'unavailable' | 'network-error' | 'key-in-use';

export interface RetryEvent {
  method: string;
  url: string;
  /** 1 for the first retry. */
  retry: number;
  /** How long the client waits before that retry. */
  delayMs: number;
  reason: RetryReason;
  /** The status that caused it, if a response came back. */
  status?: number;
  /** The error code (ECONNREFUSED...) that caused it, for network errors. */
  errorCode?: string;
}

export interface RetryPolicy {
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  random: () => number;
  onRetry: ((event: RetryEvent) => void) | undefined;
  budget: RetryBudget | undefined;
  onBudgetExhausted: ((event: Omit<RetryEvent, 'delayMs'>) => void) | undefined;
  now: () => number;
}

export function retryPolicy(options: RetryOptions = {}): RetryPolicy {
  const maxRetries = options.maxRetries ?? 3;
  const baseDelayMs = options.baseDelayMs ?? 250;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  for (const [name, value] of Object.entries({ maxRetries, baseDelayMs, maxDelayMs })) {
    if (!Number.isFinite(value) || value < 0) throw new RangeError(`retry.${name} must be a finite number >= 0`);
  }
  const now = options.now ?? Date.now;
  const { budget } = options;
  return {
    maxRetries,
    baseDelayMs,
    maxDelayMs,
    random: options.random ?? Math.random,
    onRetry: options.onRetry,
    budget: budget === false ? undefined : isRetryBudget(budget) ? budget : createRetryBudget(budget, now),
    onBudgetExhausted: options.onBudgetExhausted,
    now,
  };
}

export interface RetryBudgetOptions {
  /** Retries allowed per call made in the window (0.1: at most 10 % extra requests). Default 0.1. */
  ratio?: number;
  /** Retries allowed per second of the window whatever the traffic, so a quiet client can still retry. Default 1. */
  minPerSecond?: number;
  /** Length of the sliding window in ms, 1000 to 60000. Default 10000. */
  windowMs?: number;
}

/** How many retries a client may still send: calls deposit, retries withdraw; both count for one window. */
export interface RetryBudget {
  /** Records a call (its first attempt, which the budget never refuses). */
  deposit(): void;
  /** Takes one retry from the budget; false, taking nothing, when it is spent. */
  tryWithdraw(): boolean;
  /** Whole retries available now. */
  available(): number;
}

const BUDGET_SLICES = 10;

/**
 * A retry budget over a sliding window of ten slices (Finagle's RetryBudget, tower's TpsBudget): retries in the window
 * may reach `ratio` times the calls in the window plus `minPerSecond` times its length in seconds.
 */
export function createRetryBudget(options: RetryBudgetOptions = {}, now: () => number = Date.now): RetryBudget {
  const ratio = options.ratio ?? 0.1;
  const minPerSecond = options.minPerSecond ?? 1;
  const windowMs = options.windowMs ?? 10_000;
  for (const [name, value] of Object.entries({ ratio, minPerSecond })) {
    if (!Number.isFinite(value) || value < 0) throw new RangeError(`retry.budget.${name} must be a finite number >= 0`);
  }
  if (!Number.isInteger(windowMs) || windowMs < 1000 || windowMs > 60_000)
    throw new RangeError('retry.budget.windowMs must be a whole number from 1000 to 60000');
  const sliceMs = windowMs / BUDGET_SLICES;
  const reserve = (minPerSecond * windowMs) / 1000;
  const slices = Array.from({ length: BUDGET_SLICES }, () => ({ index: -1, deposits: 0, withdrawals: 0 }));

  /** The slice of this instant, emptied first when it last held an older instant's counts. */
  const current = () => {
    const index = Math.floor(now() / sliceMs);
    const slice = slices[index % BUDGET_SLICES]!;
    if (slice.index !== index) Object.assign(slice, { index, deposits: 0, withdrawals: 0 });
    return slice;
  };
  const balance = () => {
    const oldest = current().index - BUDGET_SLICES + 1;
    let deposits = 0;
    let withdrawals = 0;
    for (const slice of slices) {
      if (slice.index < oldest) continue;
      deposits += slice.deposits;
      withdrawals += slice.withdrawals;
    }
    // The epsilon keeps 0.1 * 10 deposits worth one whole retry despite binary fractions.
    return ratio * deposits + reserve - withdrawals + 1e-9;
  };
  return {
    deposit: () => void current().deposits++,
    tryWithdraw() {
      if (balance() < 1) return false;
      current().withdrawals++;
      return true;
    },
    available: () => Math.max(0, Math.floor(balance())),
  };
}

/** Takes a due retry from the policy's budget, or tells `onBudgetExhausted` that the answer goes back at once. */
export function spendRetry(policy: RetryPolicy, event: Omit<RetryEvent, 'delayMs'>): boolean {
  if (policy.budget?.tryWithdraw() ?? true) return true;
  policy.onBudgetExhausted?.(event);
  return false;
}

function isRetryBudget(value: RetryBudgetOptions | RetryBudget | undefined): value is RetryBudget {
  return typeof (value as RetryBudget | undefined)?.tryWithdraw === 'function';
}

/** Methods whose repetition has the same effect as one request (RFC 9110 §9.2.2). */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);

/**
 * Network failures that happen before any byte of the request reaches the server: the request was never sent, so even
 * a POST can be sent again. Anything else (reset, closed socket, timeout while waiting for the answer) may come after
 * the server acted.
 */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * Should a request that got this status be sent again?
 * - 429: the service refused it before doing anything: always, after `Retry-After`.
 * - 503: a dependency of our service failed (rate-limit store, database down, timing out, full): nothing was written
 *   (but for a PostgreSQL connection lost during the commit itself, which an `Idempotency-Key` makes safe to repeat),
 *   so always, after `Retry-After`.
 * - 502, 504: a gateway lost the answer; the service may have acted: idempotent methods, and requests carrying an
 *   `Idempotency-Key` (a repeat gets the first answer; nothing is done twice).
 * - 409 with an `Idempotency-Key`: the first request with that key is still being processed: after `Retry-After`.
 * - anything else (other 4xx, 500...): never.
 */
export function retryableStatus(method: string, status: number, idempotencyKey = false): RetryReason | undefined {
  if (status === 429) return 'rate-limited';
  if (status === 503) return 'unavailable';
  if ((status === 502 || status === 504) && (IDEMPOTENT.has(method) || idempotencyKey)) return 'unavailable';
  if (status === 409 && idempotencyKey) return 'key-in-use';
  return undefined;
}

/** Should a request that failed with this network error code be sent again? Always when it carries an Idempotency-Key. */
export function retryableNetworkError(method: string, code: string | undefined, idempotencyKey = false): boolean {
  return IDEMPOTENT.has(method) || idempotencyKey || (code !== undefined && NOT_SENT.has(code));
}

/** `Retry-After` (RFC 9110 §10.2.3) in ms: delta-seconds or an HTTP-date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * The wait before retry number `retry` (1-based): full jitter, a uniform random wait between 0 and
 * baseDelayMs * 2^(retry-1), after the server's `Retry-After` when it gave one (so clients told the same instant do not
 * all come back at it); never more than maxDelayMs. Undefined when the server asks for a longer wait than maxDelayMs:
 * retrying earlier than it said would only be refused again (and repeated requests after a 429 can get the key
 * banned), so the answer goes back to the caller instead.
 */
export function retryDelay(policy: RetryPolicy, retry: number, retryAfterMs: number | undefined): number | undefined {
  if (retryAfterMs !== undefined && retryAfterMs > policy.maxDelayMs) return undefined;
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.min(policy.maxDelayMs, (retryAfterMs ?? 0) + Math.floor(policy.random() * ceiling));
}

/** The wait before retrying an answer that may be retried (its `Retry-After` header given), or undefined for none. */
export function delayAfterAnswer(policy: RetryPolicy, attempt: number, retryAfter: string | null): number | undefined {
  if (attempt > policy.maxRetries) return undefined;
  return retryDelay(policy, attempt, parseRetryAfter(retryAfter, policy.now()));
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
