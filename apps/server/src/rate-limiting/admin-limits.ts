import {
  createLimiter,
  minuteAndDay,
  rateLimit,
  type RateLimitDecision,
  type RateLimitStore,
} from '@animal-store/rate-limit';
import type { Request, RequestHandler } from 'express';
import type { RateLimitSettings } from '../config/load.js';
import type { Metrics } from '../telemetry/metrics.js';
import { tracedDecisions } from '../telemetry/traced-store.js';
import { clientIp } from './client-address.js';
import { banPolicy, refusalCode } from './policy.js';

/** Requests with the admin token: one budget for every operator together, loose, never banned. */
export const ADMIN_LIMITS = { perMinute: 600, perDay: 20_000 } as const;
/**
 * Requests without the right admin token, per client address: enough for an operator's typo, far too few to guess a
 * 32-character token; refusals past it ban the address (the /v1 ban rule) for requests WITHOUT the token only.
 */
export const ADMIN_REFUSAL_LIMITS = { perMinute: 20, perDay: 200 } as const;

/** The two limiters of the admin API's gate (see http/admin.ts): who holds the token, and who does not. */
export interface AdminRateLimiting {
  /** For a request with the right token: the operators' shared budget. */
  operators: RequestHandler;
  /** For a request without it (none, wrong, or sent twice): per client address, with bans. */
  strangers: RequestHandler;
}

/**
 * The admin API's limiters, never a key's plan. Counted apart so that wrong tokens from an address (a guesser behind
 * the same NAT as the operators) never lock out a request that carries the right token.
 */
export function createAdminRateLimiting(
  options: Pick<RateLimitSettings, 'banThreshold' | 'banSeconds'> & {
    store: RateLimitStore;
    metrics?: Metrics | undefined;
  },
): AdminRateLimiting {
  const { metrics } = options;
  const hooks = {
    onDecision: (decision: RateLimitDecision, req: Request) => {
      if (decision.allowed) req.rateLimitCharge = decision;
      else metrics?.rateLimitRefusals.inc({ reason: refusalCode(decision), plan: 'none' });
    },
    onBan: () => metrics?.rateLimitBans.inc({ plan: 'none' }),
  };
  const operatorWindows = minuteAndDay(ADMIN_LIMITS);
  const strangerWindows = minuteAndDay(ADMIN_REFUSAL_LIMITS);
  return {
    operators: rateLimit<Request>({
      limiter: createLimiter({ store: options.store, ban: false }),
      identify: () => ({ key: 'admin:operators', windows: operatorWindows }),
      hooks,
    }),
    strangers: rateLimit<Request>({
      limiter: createLimiter({ store: tracedDecisions(options.store), ban: banPolicy(options) }),
      identify: (req) => ({ key: `admin-refused:${clientIp(req)}`, windows: strangerWindows }),
      hooks,
    }),
  };
}
