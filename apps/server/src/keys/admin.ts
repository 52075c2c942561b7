import {
  customLimitsProblem,
  dateTimeMs,
  planQuota,
  type CustomLimits,
  ROTATION_OVERLAP_SECONDS,
  SCOPES,
  type ApiKeyChanges,
  type ApiKeyUsage,
  type NewApiKey,
} from '@animal-store/contract';
import { minuteAndDay, readUsage, type RateLimitStore } from '@animal-store/rate-limit';
import type { ApiKeyRecord, ApiKeyStore, KeyChangeFeed } from '../db/types.js';
import { AppError } from '../errors/app-error.js';
import type { Logger } from '../logger.js';
import { DISPLAY_PREFIX_LENGTH, generateRawKey } from './format.js';
import { lineageOf, rateLimitKeyOf } from './identity.js';
import { hashKey } from './resolver.js';

export interface KeyAdminDeps {
  store: ApiKeyStore;
  changes: Pick<KeyChangeFeed, 'publish'>;
  /** Where counters and bans live; absent where this process cannot see them (the CLI without a shared store). */
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
    if (!key) throw new AppError('not_found', `No API key ${id}`);
    return key;
  }

  /**
   * Changes the lineage's current key; the other key of its lineage, in its overlap, takes the same name, scopes and
   * limits (a lineage is one key). A key revoked, expired or rotated out cannot change: nothing revives what
   * revocation, expiry or rotation ended.
   */
  async update(id: number, changes: ApiKeyChanges): Promise<ApiKeyRecord> {
    const now = this.#now();
    const key = await this.get(id);
    // The request's own rules first (400), then whether the key may change at all (409).
    if (changes.perMinute !== undefined || changes.perDay !== undefined || changes.concurrentRequests !== undefined) {
      checkLimits(key.plan, {
        perMinute: changes.perMinute ?? key.perMinute,
        perDay: changes.perDay ?? key.perDay,
        concurrentRequests:
          changes.concurrentRequests === undefined ? key.concurrentRequests : changes.concurrentRequests,
      });
    }
    await this.#checkCurrent(key, now, 'change');
    const updated = await this.deps.store.update(
      id,
      {
        ...(changes.name !== undefined ? { name: changes.name } : {}),
        ...(changes.scopes !== undefined ? { scopes: changes.scopes } : {}),
        ...(changes.perMinute !== undefined ? { perMinute: changes.perMinute } : {}),
        ...(changes.perDay !== undefined ? { perDay: changes.perDay } : {}),
        ...(changes.concurrentRequests !== undefined ? { concurrentRequests: changes.concurrentRequests } : {}),
        ...(changes.expiresAt !== undefined
          ? { expiresAt: changes.expiresAt === null ? null : this.#futureDate(changes.expiresAt) }
          : {}),
      },
      new Date(now),
    );
    if (!updated) throw changedMeanwhile(id);
    await this.#announce('key.update', id);
    return updated;
  }

  async revoke(match: { id: number } | { hash: string }): Promise<ApiKeyRecord> {
    const key = await this.deps.store.revoke(match, new Date(this.#now()));
    if (!key) throw new AppError('not_found', 'id' in match ? `No API key ${match.id}` : 'No such API key');
    await this.#announce('key.revoke', key.id);
    return key;
  }

  /**
   * A new raw key with the lineage's name, plan, limits, scopes and expiry (shared counters, bans and idempotency
   * records); the rotated key ends after the overlap (or at the lineage's expiry, if that comes first). Only the
   * lineage's current key can be rotated, and a lineage has at most two active keys: an older key still in its
   * overlap ends now.
   */
  async rotate(
    id: number,
    overlapSeconds: number = ROTATION_OVERLAP_SECONDS.default,
  ): Promise<{ key: ApiKeyRecord; secret: string }> {
    const now = this.#now();
    const old = await this.get(id);
    await this.#checkCurrent(old, now, 'rotate');
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
        concurrentRequests: old.concurrentRequests,
        scopes: old.scopes,
        // The current key's expiry is the lineage's.
        expiresAt: old.expiresAt,
        lineageId: lineageOf(old),
      },
      {
        oldExpiresAt: new Date(old.expiresAt ? Math.min(old.expiresAt.getTime(), overlapEnd) : overlapEnd),
        now: new Date(now),
      },
    );
    if (!rotated) throw changedMeanwhile(id);
    await this.#announce('key.rotate', id, { newKeyId: rotated.id, overlapSeconds });
    return { key: rotated, secret };
  }

  async usage(id: number): Promise<ApiKeyUsage> {
    const key = await this.get(id);
    const snapshot = await readUsage(this.#limits(), rateLimitKeyOf(key), minuteAndDay(planQuota(key.plan, key)));
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
      throw new AppError(
        'service_unavailable',
        "Counters and bans are kept in each server's memory (neither REDIS_URL nor REDIS_CLUSTER_NODES is set): use the admin API of the server in question",
      );
    }
    return this.deps.limits;
  }

  /** 409 unless `key` is its lineage's current key and active: what revocation, expiry or rotation ended stays ended. */
  async #checkCurrent(key: ApiKeyRecord, now: number, action: 'change' | 'rotate'): Promise<void> {
    const cannot = action === 'change' ? 'cannot change' : 'cannot be rotated';
    if (key.revokedAt) throw new AppError('conflict', `API key ${key.id} is revoked; revoked keys ${cannot}`);
    if (key.expiresAt && key.expiresAt.getTime() <= now)
      throw new AppError('conflict', `API key ${key.id} has expired; expired keys ${cannot}`);
    if (key.rotatedAt) {
      const successor = (await this.deps.store.lineage(lineageOf(key))).find((k) => k.id > key.id);
      const current = successor ? `key ${successor.id}` : 'its successor';
      throw new AppError(
        'conflict',
        `API key ${key.id} was rotated; its end is fixed. ${action === 'change' ? 'Change' : 'Rotate'} ${current}, the lineage's current key`,
      );
    }
  }

  #futureDate(value: string | undefined): Date | null {
    if (value === undefined) return null;
    // The contract's rule read the instant already (validation); it is read the same way here, never by Date's parser.
    const ms = dateTimeMs(value);
    if (ms === undefined) throw new AppError('invalid_request', 'expiresAt must be an RFC 3339 date-time');
    if (ms <= this.#now()) throw new AppError('invalid_request', 'expiresAt must be in the future');
    return new Date(ms);
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

const changedMeanwhile = (id: number) =>
  new AppError('conflict', `API key ${id} was revoked, rotated or expired meanwhile; read it again`);

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
    concurrentRequests: input.concurrentRequests ?? null,
    scopes: input.scopes ?? [...SCOPES],
    expiresAt: input.expiresAt ?? null,
    lineageId: null,
  });
  return { raw, record };
}

/**
 * The plan's rule for a key's own limits (the contract's): enterprise keys are created with both, the other
 * plans take none. A change of an enterprise key's limits is checked together with the limit it keeps.
 */
function checkLimits(plan: ApiKeyRecord['plan'], limits: CustomLimits): void {
  const problem = customLimitsProblem(plan, limits);
  if (problem) throw new AppError('invalid_request', problem);
}
