import type { ApiFetcher, AppRoute } from '@ts-rest/core';
import { IDEMPOTENCY_HEADERS, RATE_LIMIT_HEADERS } from '@animal-store/contract';
import { AnimalStoreError, AnimalStoreNetworkError, networkErrorCode } from './errors.js';
import { EtagCache } from './etag-cache.js';
import {
  type RetryEvent,
  type RetryPolicy,
  delayAfterAnswer,
  retryableNetworkError,
  retryableStatus,
  retryDelay,
  sleep,
  spendRetry,
} from './retry.js';
import { type AttemptTracer, attemptTracer } from './tracing.js';

export interface TransportRequest {
  method: string;
  /** Absolute URL. */
  url: string;
  /** The contract's path pattern (`/v1/pets/:petId`): names the request's trace spans. */
  template?: string | undefined;
  headers?: Record<string, string | undefined>;
  body?: string | null | undefined;
  signal?: AbortSignal | null | undefined;
}

/** The shape ts-rest's client hands back: the contract types `status` and `body` from it. */
export interface TransportResponse {
  status: number;
  body: unknown;
  headers: Headers;
}

/** The last rate-limit figures the service sent (`X-RateLimit-*`). */
export interface RateLimitInfo {
  /** Quota of the most restrictive window. */
  limit: number;
  /** Requests left in it. */
  remaining: number;
  /** Unix time, in seconds, at which it resets. */
  reset: number;
}

export interface CacheOptions {
  /** How many GET URLs to remember (least recently used first out). Default 500. */
  maxEntries?: number;
}

export interface TransportConfig {
  apiKey: string;
  /** Sent as `User-Agent` unless the request carries its own. */
  userAgent: string;
  fetch: typeof globalThis.fetch;
  retry: RetryPolicy;
  cache: CacheOptions | undefined;
  onRateLimit: (info: RateLimitInfo) => void;
}

export type Transport = (request: TransportRequest) => Promise<TransportResponse>;

/** ts-rest's fetcher on a transport (JSON bodies only); `before` sees each route first (deprecation notices). */
export function fetcherOf(transport: Transport, before?: (route: AppRoute) => void): ApiFetcher {
  return async (args) => {
    before?.(args.route);
    if (args.body !== null && args.body !== undefined && typeof args.body !== 'string') {
      throw new AnimalStoreError('only JSON request bodies are supported');
    }
    return transport({
      method: args.method,
      url: args.path,
      template: args.route.path,
      headers: args.headers,
      body: args.body,
      signal: args.fetchOptions?.signal,
    });
  };
}

/**
 * Sends requests with the bearer key, retries what is safe to retry (see retry.ts), records rate-limit headers and,
 * when asked, revalidates GETs with `If-None-Match`.
 */
export function createTransport(config: TransportConfig): Transport {
  const cache = config.cache ? new EtagCache(config.cache.maxEntries ?? 500) : undefined;
  const tracing = attemptTracer();

  return async function send(request) {
    const method = request.method.toUpperCase();
    const headers = requestHeaders(config, method, request.headers);
    const cached = method === 'GET' ? cache?.get(request.url) : undefined;
    if (cached && !headers.has('if-none-match')) headers.set('if-none-match', cached.etag);
    const result = await sendWithRetries(config, await tracing, { ...request, method, headers });
    return cache && method === 'GET' ? cache.revalidated(request.url, result, cached) : result;
  };
}

/** The request's headers with the key, `Accept`, `User-Agent` and, on a POST, an `Idempotency-Key`. */
function requestHeaders(config: TransportConfig, method: string, given: TransportRequest['headers']): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(given ?? {})) if (value !== undefined) headers.set(name, value);
  headers.set('authorization', `Bearer ${config.apiKey}`);
  if (!headers.has('accept')) headers.set('accept', 'application/json');
  if (!headers.has('user-agent')) headers.set('user-agent', config.userAgent);
  // Every POST (createPet) carries an Idempotency-Key, the same on each retry of this call: the service answers a
  // repeat with the first answer and never creates twice, so a POST whose answer was lost can be sent again.
  if (method === 'POST' && !headers.has(IDEMPOTENCY_HEADERS.key))
    headers.set(IDEMPOTENCY_HEADERS.key, crypto.randomUUID());
  return headers;
}

type RetryReason = Pick<RetryEvent, 'reason' | 'status' | 'errorCode'>;

/** One call: attempts until an answer that is not retried, or a failure that is not; each attempt traced. */
async function sendWithRetries(
  config: TransportConfig,
  tracer: AttemptTracer | undefined,
  request: Omit<TransportRequest, 'headers'> & { headers: Headers },
): Promise<TransportResponse> {
  const { method, url, headers } = request;
  const signal = request.signal ?? undefined;
  const idempotencyKey = headers.has(IDEMPOTENCY_HEADERS.key);
  const budgetAllows = (attempt: number, event: RetryReason) =>
    spendRetry(config.retry, { method, url, retry: attempt, ...event });
  const wait = async (delayMs: number, attempt: number, event: RetryReason) => {
    config.retry.onRetry?.({ method, url, retry: attempt, delayMs, ...event });
    await sleep(delayMs, signal);
  };

  // A call deposits into the retry budget once; each retry withdraws (retry.ts).
  config.retry.budget?.deposit();
  for (let attempt = 1; ; attempt++) {
    signal?.throwIfAborted();
    const span = tracer?.start(method, url, request.template, attempt - 1, headers);
    let response: Response;
    try {
      response = await config.fetch(url, { method, headers, body: request.body ?? null, signal: signal ?? null });
    } catch (error) {
      span?.fail(error);
      if (signal?.aborted) throw signal.reason;
      const errorCode = networkErrorCode(error);
      const event = { reason: 'network-error', ...(errorCode ? { errorCode } : {}) } as const;
      const retryable = attempt <= config.retry.maxRetries && retryableNetworkError(method, errorCode, idempotencyKey);
      if (!retryable || !budgetAllows(attempt, event)) {
        throw new AnimalStoreNetworkError(method, url, attempt, { cause: error, budgetSpent: retryable });
      }
      await wait(retryDelay(config.retry, attempt, undefined) ?? 0, attempt, event);
      continue;
    }

    span?.end(response.status);
    const rateLimit = rateLimitOf(response.headers);
    if (rateLimit) config.onRateLimit(rateLimit);
    const reason = retryableStatus(method, response.status, idempotencyKey);
    const delayMs =
      reason && delayAfterAnswer(config.retry, attempt, response.headers.get(RATE_LIMIT_HEADERS.retryAfter));
    if (reason && delayMs !== undefined && budgetAllows(attempt, { reason, status: response.status })) {
      await response.body?.cancel();
      await wait(delayMs, attempt, { reason, status: response.status });
      continue;
    }
    return { status: response.status, body: await readBody(response), headers: response.headers };
  }
}

/** The `X-RateLimit-*` figures of an answer, when it has all three. */
function rateLimitOf(headers: Headers): RateLimitInfo | undefined {
  const read = (name: string) => {
    const value = headers.get(name);
    return value !== null && /^\s*\d+\s*$/.test(value) ? Number(value) : undefined;
  };
  const limit = read(RATE_LIMIT_HEADERS.limit);
  const remaining = read(RATE_LIMIT_HEADERS.remaining);
  const reset = read(RATE_LIMIT_HEADERS.reset);
  return limit !== undefined && remaining !== undefined && reset !== undefined
    ? { limit, remaining, reset }
    : undefined;
}

/** JSON when the response says so, else text; undefined for an empty body (204, 304). */
async function readBody(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === '') return undefined;
  const type = response.headers.get('content-type') ?? '';
  if (/[/+]json\b/i.test(type)) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}
