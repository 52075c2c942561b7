import type { ErrorCode } from '@animal-store/contract';
import { MINUTE_MS, type BanPolicy, type RateLimitDecision } from '@animal-store/rate-limit';
import type { RateLimitSettings } from '../config/load.js';

/** The service's ban rule: more than `banThreshold` refusals within one clock minute ban for `banSeconds`. */
export function banPolicy(settings: Pick<RateLimitSettings, 'banThreshold' | 'banSeconds'>): BanPolicy {
  return { maxRefusals: settings.banThreshold, windowMs: MINUTE_MS, durationMs: settings.banSeconds * 1000 };
}

/** The error code of a refusal: the `reason` label of `animal_store_rate_limit_refusals_total` too. */
export function refusalCode(decision: RateLimitDecision): Extract<ErrorCode, 'api_key_banned' | 'rate_limit_exceeded'> {
  return decision.reason === 'banned' ? 'api_key_banned' : 'rate_limit_exceeded';
}
