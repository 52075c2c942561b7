import {
  ERROR_STATUS,
  ROTATION_OVERLAP_SECONDS,
  SCOPES,
  type ApiKey,
  type ApiKeyChanges,
  type ApiKeyUsage,
  type ErrorCode,
  type NewApiKey,
} from '@animal-store/contract';
import { customLimitsProblem, limitsForPlan, readUsage, type RateLimitStore } from '@animal-store/rate-limit';
import type { KeyChangeFeed } from '../db/key-changes.js';
import type { ApiKeyRecord, ApiKeyStore } from '../db/types.js';
import type { Logger } from '../logger.js';
import { DISPLAY_PREFIX_LENGTH, generateRawKey } from './format.js';
import { rateLimitKeyOf } from './identity.js';
import { hashKey } from './resolver.js';

/** A refusal of an admin operation; its status follows from its code, and its message is safe to show. */
export class KeyAdminError extends Error {
  readonly status: number;
  constructor(
    readonly code: Extract<ErrorCode, 'invalid_request' | 'not_found' | 'conflict' | 'service_unavailable'>,
    message: string,
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }
}

/** The key as the admin API and the CLI show it: never the hash; the limits in force (the plan's unless enterprise). */
export function apiKeyView(key: ApiKeyRecord): ApiKey {
  const [minute, day] = limitsForPlan(key.plan, { perMinute: key.perMinute, perDay: key.perDay });
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    plan: key.plan,
    scopes: [...key.scopes],
    perMinute: minute!.limit,
    perDay: day!.limit,
    createdAt: key.createdAt.toISOString(),
    expiresAt: key.expiresAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
  };
}

export interface KeyAdminDeps {
  store: ApiKeyStore;
  changes: Pick<KeyChangeFeed, 'publish'>;
  /** Where counters and bans live; absent where this process cannot see them (the CLI without REDIS_URL). */
  limits: RateLimitStore | undefined;
  logger: Logger;
  /** Who acts, for the audit log: `api` or `cli`. */
  via: 'api' | 'cli';
  now?: () => number;
}

/**
 * The operations on keys, for the admin API and the key CLI alike (one code path, one set of rules). Inputs are the
 * contract's validated shapes; every rule is checked before anything is written, and each operation is one statement
 * or one transaction, so no request can leave a half-made key. Every action is logged (action and key id, never a
 * secret) and announced on the change feed, so every replica drops its cached view of the key at once.
 */
export class KeyAdmin {
  readonly #now: () => number;

  constructor(private readonly deps: KeyAdminDeps) {
    this.#now = deps.now ?? Date.now;
  }

  async create(input: NewApiKey): Promise<{ key: ApiKeyRecord; secret: string }> {
    const { raw, record } = await createApiKey(this.deps.store, {
      ...input,
      expiresAt: this.#futureDate(input.expiresAt),
    });
    this.#log('key.create', record.id);
    return { key: record, secret: raw };
  }

  list(page: { limit: number; afterId?: number | undefined }): Promise<ApiKeyRecord[]> {
    return this.deps.store.list(page);
  }

  async get(id: number): Promise<ApiKeyRecord> {
    const key = await this.deps.store.findById(id);
    if (!key) throw new KeyAdminError('not_found', `No API key ${id}`);
    return key;
  }

  async update(id: number, changes: ApiKeyChanges): Promise<ApiKeyRecord> {
    const key = await this.get(id);
    if (key.revokedAt) throw new KeyAdminError('conflict', `API key ${id} is revoked; revoked keys cannot change`);
    if (changes.perMinute !== undefined || changes.perDay !== undefined) {
      checkLimits(key.plan, { perMinute: changes.perMinute ?? key.perMinute, perDay: changes.perDay ?? key.perDay });
    }
    const updated = await this.deps.store.update(id, {
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.scopes !== undefined ? { scopes: changes.scopes } : {}),
      ...(changes.perMinute !== undefined ? { perMinute: changes.perMinute } : {}),
      ...(changes.perDay !== undefined ? { perDay: changes.perDay } : {}),
      ...(changes.expiresAt !== undefined
        ? { expiresAt: changes.expiresAt === null ? null : this.#futureDate(changes.expiresAt) }
        : {}),
    });
    if (!updated) throw new KeyAdminError('conflict', `API key ${id} is revoked; revoked keys cannot change`);
    await this.#announce('key.update', id);
    return updated;
  }

  async revoke(match: { id: number } | { hash: string }): Promise<ApiKeyRecord> {
    const key = await this.deps.store.revoke(match, new Date(this.#now()));
    if (!key) throw new KeyAdminError('not_found', 'id' in match ? `No API key ${match.id}` : 'No such API key');
    await this.#announce('key.revoke', key.id);
    return key;
  }

  /**
   * A new raw key with the same name, plan, limits, scopes and expiry, in the same rate-limit lineage (shared counters
   * and bans); the old key expires after the overlap (or at its own expiry, if that comes first).
   */
  async rotate(
    id: number,
    overlapSeconds: number = ROTATION_OVERLAP_SECONDS.default,
  ): Promise<{ key: ApiKeyRecord; secret: string }> {
    const now = this.#now();
    const old = await this.get(id);
    this.#checkActive(old, now);
    const secret = generateRawKey();
    const overlapEnd = now + overlapSeconds * 1000;
    const rotated = await this.deps.store.rotate(
      id,
      {
        prefix: secret.slice(0, DISPLAY_PREFIX_LENGTH),
        hash: hashKey(secret),
        name: old.name,
        plan: old.plan,
        perMinute: old.perMinute,
        perDay: old.perDay,
        scopes: old.scopes,
        expiresAt: old.expiresAt,
        lineageId: old.lineageId ?? old.id,
      },
      {
        oldExpiresAt: new Date(old.expiresAt ? Math.min(old.expiresAt.getTime(), overlapEnd) : overlapEnd),
        now: new Date(now),
      },
    );
    // Someone revoked or rotated it to an end between the read and the transaction.
    if (!rotated) throw new KeyAdminError('conflict', `API key ${id} is revoked or expired; it cannot be rotated`);
    await this.#announce('key.rotate', id, { newKeyId: rotated.id, overlapSeconds });
    return { key: rotated, secret };
  }

  async usage(id: number): Promise<ApiKeyUsage> {
    const key = await this.get(id);
    const snapshot = await readUsage(
      this.#limits(),
      rateLimitKeyOf(key),
      limitsForPlan(key.plan, { perMinute: key.perMinute, perDay: key.perDay }),
    );
    const [minute, day] = snapshot.windows.map((w) => ({
      limit: w.limit,
      used: w.used,
      remaining: w.remaining,
      reset: Math.ceil(w.resetAt / 1000),
    }));
    return {
      plan: key.plan,
      minute: minute!,
      day: day!,
      bannedUntil: snapshot.banUntil === null ? null : new Date(snapshot.banUntil).toISOString(),
    };
  }

  /** Clears the counters and the ban of the key's lineage. */
  async liftBan(id: number): Promise<void> {
    const key = await this.get(id);
    await this.#limits().resetKey(rateLimitKeyOf(key));
    this.#log('key.unban', id);
  }

  #limits(): RateLimitStore {
    if (!this.deps.limits) {
      throw new KeyAdminError(
        'service_unavailable',
        "Counters and bans are kept in each server's memory (no REDIS_URL): use the admin API of the server in question",
      );
    }
    return this.deps.limits;
  }

  #checkActive(key: ApiKeyRecord, now: number): void {
    if (key.revokedAt) throw new KeyAdminError('conflict', `API key ${key.id} is revoked; it cannot be rotated`);
    if (key.expiresAt && key.expiresAt.getTime() <= now)
      throw new KeyAdminError('conflict', `API key ${key.id} has expired; it cannot be rotated`);
  }

  #futureDate(value: string | undefined): Date | null {
    if (value === undefined) return null;
    const date = new Date(value);
    if (date.getTime() <= this.#now()) throw new KeyAdminError('invalid_request', 'expiresAt must be in the future');
    return date;
  }

  async #announce(action: string, keyId: number, detail: Record<string, unknown> = {}): Promise<void> {
    this.#log(action, keyId, detail);
    try {
      await this.deps.changes.publish(keyId);
    } catch (err) {
      // The change is committed; other replicas still drop the old view within their key cache TTL.
      this.deps.logger.warn(
        { err: (err as Error).message, keyId },
        'could not announce a key change; other replicas see it within KEY_CACHE_TTL_MS',
      );
    }
  }

  #log(action: string, keyId: number, detail: Record<string, unknown> = {}): void {
    this.deps.logger.info({ action, keyId, via: this.deps.via, ...detail }, 'admin action');
  }
}

/** Creates a key after checking its limits; the raw key is returned once and never stored. */
export async function createApiKey(
  store: Pick<ApiKeyStore, 'create'>,
  input: Omit<NewApiKey, 'expiresAt'> & { expiresAt?: Date | null },
): Promise<{ raw: string; record: ApiKeyRecord }> {
  checkLimits(input.plan, input);
  const raw = generateRawKey();
  const record = await store.create({
    prefix: raw.slice(0, DISPLAY_PREFIX_LENGTH),
    hash: hashKey(raw),
    name: input.name ?? null,
    plan: input.plan,
    perMinute: input.perMinute ?? null,
    perDay: input.perDay ?? null,
    scopes: input.scopes ?? [...SCOPES],
    expiresAt: input.expiresAt ?? null,
    lineageId: null,
  });
  return { raw, record };
}

/**
 * The plan's rule for a key's own limits (the rate-limit package's): enterprise keys are created with both, the other
 * plans take none. A change of an enterprise key's limits is checked together with the limit it keeps.
 */
function checkLimits(
  plan: ApiKeyRecord['plan'],
  limits: { perMinute?: number | null | undefined; perDay?: number | null | undefined },
): void {
  const problem = customLimitsProblem(plan, limits);
  if (problem) throw new KeyAdminError('invalid_request', problem);
}
