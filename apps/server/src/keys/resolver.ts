import { hash, timingSafeEqual } from 'node:crypto';
import type { ApiKeyRecord, ApiKeyStore } from '../db/types.js';
import { looksLikeKey } from './format.js';

export function hashKey(raw: string): string {
  return hash('sha256', raw, 'hex');
}

/** A looked-up key as the cache keeps it: its record's hash also as bytes, for the constant-time compare. */
interface CachedLookup {
  record: ApiKeyRecord | undefined;
  digest: Buffer | undefined;
  expires: number;
}

const digestOf = (record: ApiKeyRecord | undefined) => (record ? Buffer.from(record.hash, 'hex') : undefined);

/** Answer of `KeyResolver.peek` when the key has to be looked up (not cached, or the entry is too old). */
export const KEY_LOOKUP_NEEDED: unique symbol = Symbol('key lookup needed');

/** What a bearer key resolves to: the active key, `'expired'` (it existed and expired), or undefined (unknown, malformed, revoked). */
export type KeyResolution = ApiKeyRecord | 'expired' | undefined;

/**
 * Resolves bearer keys to key records on the request path. A key whose checksum does not match is refused without a
 * lookup. Lookups (found or not) are cached in-process for `ttlMs`, the safety net; `clear()` empties the cache at
 * once when a key changes (the change feed calls it on every replica). The cache is bounded.
 */
export class KeyResolver {
  readonly #cache = new Map<string, CachedLookup>();
  readonly #inflight = new Map<string, Promise<ApiKeyRecord | undefined>>();
  /** Moves on every clear(): a lookup that started before a clear must not refill the cache with what it read. */
  #generation = 0;

  constructor(
    private readonly store: Pick<ApiKeyStore, 'findByHash'>,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 10_000,
  ) {}

  async resolve(raw: string): Promise<KeyResolution> {
    if (!looksLikeKey(raw)) return undefined;
    const hash = hashKey(raw);
    const record = await this.#lookup(hash);
    return this.#active(record, digestOf(record), hash);
  }

  /**
   * What `resolve` would answer, when it can answer without waiting (a malformed key, or a cached lookup); otherwise
   * `KEY_LOOKUP_NEEDED`. Lets the request path skip a promise per request for the common, cached case.
   */
  peek(raw: string): KeyResolution | typeof KEY_LOOKUP_NEEDED {
    if (!looksLikeKey(raw)) return undefined;
    const hash = hashKey(raw);
    const cached = this.#cache.get(hash);
    if (!cached || cached.expires <= this.now()) return KEY_LOOKUP_NEEDED;
    return this.#active(cached.record, cached.digest, hash);
  }

  /** Forgets every cached lookup (a key was revoked, rotated or changed somewhere). */
  clear(): void {
    this.#generation++;
    this.#cache.clear();
    this.#inflight.clear();
  }

  /** `digest`: the record's hash as bytes (kept with a cached lookup, so a cache hit converts only the key's). */
  #active(record: ApiKeyRecord | undefined, digest: Buffer | undefined, hash: string): KeyResolution {
    // The database found the row by its hash; compare once more in constant time before trusting it.
    if (!record || !digest || !timingSafeEqual(digest, Buffer.from(hash, 'hex'))) return undefined;
    if (record.revokedAt) return undefined;
    return record.expiresAt !== null && record.expiresAt.getTime() <= this.now() ? 'expired' : record;
  }

  async #lookup(hash: string): Promise<ApiKeyRecord | undefined> {
    const cached = this.#cache.get(hash);
    if (cached && cached.expires > this.now()) return cached.record;
    const pending = this.#inflight.get(hash);
    if (pending) return pending;
    const generation = this.#generation;
    const lookup = this.store
      .findByHash(hash)
      .then((record) => {
        if (this.ttlMs > 0 && generation === this.#generation) {
          this.#cache.delete(hash);
          if (this.#cache.size >= this.maxEntries) {
            const oldest = this.#cache.keys().next().value;
            if (oldest !== undefined) this.#cache.delete(oldest);
          }
          this.#cache.set(hash, { record, digest: digestOf(record), expires: this.now() + this.ttlMs });
        }
        return record;
      })
      .finally(() => {
        if (this.#inflight.get(hash) === lookup) this.#inflight.delete(hash);
      });
    this.#inflight.set(hash, lookup);
    return lookup;
  }
}
