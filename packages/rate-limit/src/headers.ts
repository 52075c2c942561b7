import type { RateLimitDecision, WindowState } from './limiter.js';
import type { UsageSnapshot } from './usage.js';

/** JSON error body of the limiter's 429 responses. */
export interface RateLimitErrorBody {
  readonly code: 'rate_limit_exceeded' | 'api_key_banned';
  readonly message: string;
  readonly status: 429;
}

/** Serialises a window name as a Structured-Field string (RFC 8941); names are few, so each is built once. */
const sfStrings = new Map<string, string>();
function sfString(value: string): string {
  let sf = sfStrings.get(value);
  if (sf === undefined) {
    const printable = value.replace(/[^\x20-\x7e]/g, '?');
    sf = `"${printable.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
    if (sfStrings.size < 64) sfStrings.set(value, sf);
  }
  return sf;
}

/**
 * Response headers for a decision (names in canonical case):
 *
 * - `X-RateLimit-Limit` / `X-RateLimit-Remaining` / `X-RateLimit-Reset` describe the most
 *   restrictive window (lowest remaining; on a tie the longer window). Reset is Unix epoch seconds.
 *   When banned: remaining `0` and reset = end of the ban.
 * - `RateLimit-Policy` (draft-ietf-httpapi-ratelimit-headers-10) lists every window:
 *   `"minute";q=60;w=60, "day";q=1000;w=86400`.
 * - `RateLimit` lists every window's state: `"minute";r=59;t=42, "day";r=999;t=3600`
 *   (`r` remaining, `t` seconds until reset; when banned `r=0` and `t` is at least the ban's).
 * - `Retry-After` (whole seconds, >= 1) when the request is refused or banned.
 */
export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  const banUntil = decision.reason === 'banned' ? decision.banUntil : null;
  const headers = windowHeaders(decision.windows, decision.limiting, decision.now, banUntil, decision.allowed);
  if (decision.retryAfterSeconds !== null) headers['Retry-After'] = String(decision.retryAfterSeconds);
  return headers;
}

/**
 * The same headers for an identity's windows as read without charging ({@link readUsage}), for an answer the limiter
 * let through uncharged: as an allowed request's, or a banned one's while the ban lasts (no `Retry-After`).
 */
export function usageHeaders(usage: UsageSnapshot): Record<string, string> {
  let limiting = usage.windows[0]!;
  for (const w of usage.windows)
    if (w.remaining < limiting.remaining || (w.remaining === limiting.remaining && w.windowMs > limiting.windowMs))
      limiting = w;
  return windowHeaders(usage.windows, limiting, usage.now, usage.banUntil, usage.banUntil === null);
}

function windowHeaders(
  windows: readonly WindowState[],
  limiting: WindowState,
  now: number,
  banUntil: number | null,
  allowed: boolean,
): Record<string, string> {
  const banned = banUntil !== null;
  const banSeconds = banned ? Math.max(0, Math.ceil((banUntil - now) / 1000)) : 0;
  const policy: string[] = [];
  const state: string[] = [];
  for (const w of windows) {
    const name = sfString(w.name);
    policy.push(`${name};q=${w.limit};w=${Math.ceil(w.windowMs / 1000)}`);
    const t = Math.max(0, Math.ceil((w.resetAt - now) / 1000));
    state.push(`${name};r=${banned ? 0 : w.remaining};t=${banned ? Math.max(t, banSeconds) : t}`);
  }
  return {
    'X-RateLimit-Limit': String(limiting.limit),
    'X-RateLimit-Remaining': String(allowed ? limiting.remaining : 0),
    'X-RateLimit-Reset': String(banned ? Math.ceil(banUntil / 1000) : Math.ceil(limiting.resetAt / 1000)),
    'RateLimit-Policy': policy.join(', '),
    RateLimit: state.join(', '),
  };
}

/**
 * The `{ code, message, status }` body for a refused decision:
 * `rate_limit_exceeded`, or `api_key_banned` while banned. Returns `null` when allowed.
 */
export function rateLimitErrorBody(decision: RateLimitDecision): RateLimitErrorBody | null {
  if (decision.allowed) return null;
  const retry = decision.retryAfterSeconds ?? 1;
  if (decision.reason === 'banned') {
    return {
      code: 'api_key_banned',
      message: `Temporarily banned for repeatedly exceeding the rate limit. Retry in ${retry} s.`,
      status: 429,
    };
  }
  const refusing = decision.windows.filter((w) => w.remaining === 0);
  const detail = refusing.map((w) => `${w.limit} requests per ${w.name}`).join(' and ');
  return {
    code: 'rate_limit_exceeded',
    message: `Rate limit exceeded${detail ? ` (${detail})` : ''}. Retry in ${retry} s.`,
    status: 429,
  };
}
