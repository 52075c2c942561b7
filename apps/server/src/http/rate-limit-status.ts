import type { RateLimitStatus } from '@animal-store/contract';
import { readUsage, usageHeaders, type RateLimitStore } from '@animal-store/rate-limit';
import type { Request, Response } from 'express';
import { rateLimitIdentityOf } from '../keys/identity.js';

/**
 * `GET /v1/rate_limit`: the caller's windows now, read without charging (the limiter lets this route through
 * uncharged). Its rate-limit headers (`X-RateLimit-*`, `RateLimit`, `RateLimit-Policy`) are every other answer's.
 */
export function rateLimitStatus(store: RateLimitStore) {
  return async ({ req, res }: { req: Request; res: Response }): Promise<{ status: 200; body: RateLimitStatus }> => {
    // requireApiKey ran before: the key is there.
    const key = req.apiKey!;
    const identity = rateLimitIdentityOf(key);
    const usage = await readUsage(store, identity.key, identity.windows);
    const banned = usage.banUntil !== null;
    const [minute, day] = usage.windows.map((w) => ({
      limit: w.limit,
      remaining: banned ? 0 : w.remaining,
      reset: Math.ceil((banned ? Math.max(w.resetAt, usage.banUntil) : w.resetAt) / 1000),
    }));
    res.set(usageHeaders(usage));
    return { status: 200, body: { plan: key.plan, minute: minute!, day: day! } };
  };
}
