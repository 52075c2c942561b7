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
}

export function retryPolicy(options: RetryOptions = {}): RetryPolicy {
  const maxRetries = options.maxRetries ?? 3;
  const baseDelayMs = options.baseDelayMs ?? 250;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  for (const [name, value] of Object.entries({ maxRetries, baseDelayMs, maxDelayMs })) {
    if (!Number.isFinite(value) || value < 0) throw new RangeError(`retry.${name} must be a finite number >= 0`);
  }
  return { maxRetries, baseDelayMs, maxDelayMs, random: options.random ?? Math.random, onRetry: options.onRetry };
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
 * The wait before retry number `retry` (1-based): the server's `Retry-After` when it gave one, else full jitter
 * (a uniform random wait between 0 and baseDelayMs * 2^(retry-1)); never more than maxDelayMs. Undefined when the
 * server asks for a longer wait than maxDelayMs: retrying earlier than it said would only be refused again (and repeated
 * requests after a 429 can get the key banned), so the answer goes back to the caller instead.
 */
export function retryDelay(policy: RetryPolicy, retry: number, retryAfterMs: number | undefined): number | undefined {
  if (retryAfterMs !== undefined) return retryAfterMs <= policy.maxDelayMs ? retryAfterMs : undefined;
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.floor(policy.random() * ceiling);
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
