import { API_PREFIX, contract, PLAN_LIMITS } from '@animal-store/contract';
import {
  createLimiter,
  minuteAndDay,
  rateLimit,
  rateLimitErrorBody,
  rateLimitHeaders,
  readUsage,
  usageHeaders,
  type RateLimitDecision,
  type RateLimitStore,
} from '@animal-store/rate-limit';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { RateLimitSettings } from '../config/load.js';
import { clientIp } from './client-address.js';
import { rateLimitIdentityOf } from '../keys/identity.js';
import type { Metrics } from '../telemetry/metrics.js';
import { tracedDecisions } from '../telemetry/traced-store.js';
import { banPolicy, refusalCode } from './policy.js';
import { RefusedAddresses } from './refused-addresses.js';

/** Path of the rate-limit status under /v1, which is not charged. */
const RATE_LIMIT_STATUS_PATH = contract.getRateLimit.path.slice(API_PREFIX.length);

/** A keyless request is limited per client address with the Free plan's windows, so key guessing is slowed too. */
const KEYLESS_WINDOWS = minuteAndDay(PLAN_LIMITS.free);

export interface ApiRateLimiting {
  middleware: RequestHandler;
  /**
   * Refuses cheaply, before a key lookup: for a client address this process saw refused and whose refusal may still
   * hold, asks the limiter about the address first (charged as the keyless request it may turn out to be; refusals
   * still count towards a ban) and answers its 429 without looking the key up. Returns false when the address is not
   * known as refused; otherwise it answers, or calls `lookup` when the limiter lets the address through after all.
   */
  refuseKnownAddress: (req: Request, res: Response, next: NextFunction, lookup: () => void) => boolean;
}

/** The rate-limit middleware of /v1. Identity: the API key's rotation lineage (its plan's windows), or the address. */
export function createRateLimiting(
  options: Pick<RateLimitSettings, 'banThreshold' | 'banSeconds'> & {
    store: RateLimitStore;
    metrics?: Metrics | undefined;
    /** Clock of the refused-address memo (tests). */
    now?: () => number;
    /** Told when a key's request is refused because its lineage is banned (the door refuses the next ones). */
    onKeyBanned?: (req: Request, decision: RateLimitDecision) => void;
  },
): ApiRateLimiting {
  const limiter = createLimiter({ store: tracedDecisions(options.store), ban: banPolicy(options) });
  const { metrics } = options;
  const refused = new RefusedAddresses(options.now);
  const countRefusal = (decision: RateLimitDecision, req: Request) =>
    metrics?.rateLimitRefusals.inc({ reason: refusalCode(decision), plan: planOf(req) });
  const middleware = rateLimit<Request>({
    limiter,
    identify: (req) =>
      req.apiKey ? rateLimitIdentityOf(req.apiKey) : { key: `ip:${clientIp(req)}`, windows: KEYLESS_WINDOWS },
    hooks: {
      onDecision: (decision, req) => {
        if (decision.allowed) {
          req.rateLimitCharge = decision;
          return;
        }
        if (!req.apiKey) refused.remember(clientIp(req), decision);
        else if (decision.reason === 'banned') options.onKeyBanned?.(req, decision);
        countRefusal(decision, req);
      },
      onBan: (_identity, _decision, req) => metrics?.rateLimitBans.inc({ plan: planOf(req) }),
    },
  });
  return {
    middleware: (req, res, next) => {
      // GET /v1/rate_limit with a valid key is let through uncharged (it reads the windows without consuming them).
      if (req.apiKey && req.path === RATE_LIMIT_STATUS_PATH && (req.method === 'GET' || req.method === 'HEAD')) next();
      // The key lookup failed: the service's failure (a 503 follows), never charged to the client's address.
      else if (typeof req.apiKeyProblem === 'object') withUsageHeaders(options.store, req, res, next);
      else middleware(req, res, next);
    },
    refuseKnownAddress(req, res, next, lookup) {
      const address = clientIp(req);
      if (!refused.check(address)) return false;
      limiter.consume(`ip:${address}`, KEYLESS_WINDOWS).then((decision) => {
        if (decision.allowed) {
          // Refunded if the lookup then fails (a dependency failure is never charged).
          req.rateLimitCharge = decision;
          lookup();
          return;
        }
        refused.remember(address, decision);
        countRefusal(decision, req);
        if (decision.banStarted) metrics?.rateLimitBans.inc({ plan: 'none' });
        answerRefusal(res, decision);
      }, next);
      return true;
    },
  };
}

/** The address's windows as they stand, on an answer that charges nothing (best effort: no headers if unread). */
function withUsageHeaders(store: RateLimitStore, req: Request, res: Response, next: NextFunction): void {
  readUsage(store, `ip:${clientIp(req)}`, KEYLESS_WINDOWS).then(
    (usage) => {
      res.set(usageHeaders(usage));
      next();
    },
    () => next(),
  );
}

/** The limiter's 429, with its headers and Error body. */
function answerRefusal(res: Response, decision: RateLimitDecision): void {
  res
    .status(429)
    .set(rateLimitHeaders(decision))
    .type('application/json')
    .end(JSON.stringify(rateLimitErrorBody(decision)));
}

/** The metric label of a request's plan: its key's, or `none` without a valid key (limited by address). */
function planOf(req: Request): string {
  return req.apiKey?.plan ?? 'none';
}
