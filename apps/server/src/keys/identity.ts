import { planQuota } from '@animal-store/contract';
import { minuteAndDay, type ConcurrencyIdentity, type RateLimitIdentity } from '@animal-store/rate-limit';
import type { ApiKeyRecord } from '../db/types.js';

/**
 * The rate-limit identity of a key: its rotation lineage (the first key's id), so that a rotated key and its successor
 * share counters and bans, and a rotation resets no quota and lifts no ban.
 */
export function rateLimitKeyOf(key: Pick<ApiKeyRecord, 'id' | 'lineageId'>): string {
  return `key:${lineageOf(key)}`;
}

/** A key's rotation lineage: its first key's id, the same for every key of the lineage. */
export function lineageOf(key: Pick<ApiKeyRecord, 'id' | 'lineageId'>): number {
  return key.lineageId ?? key.id;
}

/** What a key's requests are limited under: its lineage, its windows and its requests in flight at once. */
export type KeyLimits = RateLimitIdentity & ConcurrencyIdentity;

// A key's identity is the same on every request: built once per key record (records live in the key cache).
const identities = new WeakMap<ApiKeyRecord, KeyLimits>();

/**
 * The identity a key's requests are limited under, with the windows and the concurrent requests of its plan (or an
 * enterprise key's own).
 */
export function rateLimitIdentityOf(key: ApiKeyRecord): KeyLimits {
  let identity = identities.get(key);
  if (identity === undefined) {
    const quota = planQuota(key.plan, key);
    identity = { key: rateLimitKeyOf(key), windows: minuteAndDay(quota), limit: quota.concurrentRequests };
    identities.set(key, identity);
  }
  return identity;
}
