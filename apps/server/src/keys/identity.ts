import { limitsForPlan, type RateLimitIdentity } from '@animal-store/rate-limit';
import type { ApiKeyRecord } from '../db/types.js';

/**
 * The rate-limit identity of a key: its rotation lineage (the first key's id), so that a rotated key and its successor
 * share counters and bans, and a rotation resets no quota and lifts no ban.
 */
export function rateLimitKeyOf(key: Pick<ApiKeyRecord, 'id' | 'lineageId'>): string {
  return `key:${key.lineageId ?? key.id}`;
}

// A key's identity is the same on every request: built once per key record (records live in the key cache).
const identities = new WeakMap<ApiKeyRecord, RateLimitIdentity>();

/** The identity and windows (the plan's, or an enterprise key's own) a key's requests are limited under. */
export function rateLimitIdentityOf(key: ApiKeyRecord): RateLimitIdentity {
  let identity = identities.get(key);
  if (identity === undefined) {
    identity = {
      key: rateLimitKeyOf(key),
      windows: limitsForPlan(key.plan, { perMinute: key.perMinute, perDay: key.perDay }),
    };
    identities.set(key, identity);
  }
  return identity;
}
