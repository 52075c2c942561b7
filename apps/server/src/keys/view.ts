import { planQuota, type ApiKey } from '@animal-store/contract';
import type { ApiKeyRecord } from '../db/types.js';

/** The key as the admin API and the CLI show it: never the hash; the limits in force (the plan's unless enterprise). */
export function apiKeyView(key: ApiKeyRecord): ApiKey {
  const quota = planQuota(key.plan, key);
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    plan: key.plan,
    scopes: [...key.scopes],
    perMinute: quota.perMinute,
    perDay: quota.perDay,
    concurrentRequests: quota.concurrentRequests,
    createdAt: key.createdAt.toISOString(),
    expiresAt: key.expiresAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    lastDeprecatedCallAt: key.lastDeprecatedCallAt?.toISOString() ?? null,
  };
}
