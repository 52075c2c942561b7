import { z } from 'zod';
import { planWindows, windowNow } from './windows-now.js';

/** What a key may do. `pets:read`: list and get; `pets:write`: create. A key has one or both (default both). */
export const SCOPES = ['pets:read', 'pets:write'] as const;
export const Scope = z.enum(SCOPES, { errorMap: () => ({ message: `scopes must be among ${SCOPES.join(', ')}` }) });
export type Scope = z.infer<typeof Scope>;

/** One rate-limit window as `GET /v1/rate_limit` shows it; `reset` is Unix seconds, as in `X-RateLimit-Reset`. */
export const RateLimitWindow = windowNow('RateLimitWindow', {});

/** Answer of `GET /v1/rate_limit`: the caller's plan and both windows now (that request is not charged). */
export const RateLimitStatus = planWindows('RateLimitStatus', RateLimitWindow, {});
export type RateLimitStatus = z.infer<typeof RateLimitStatus>;
