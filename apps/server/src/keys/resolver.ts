import { hash, timingSafeEqual } from 'node:crypto';
import type { ApiKeyRecord, ApiKeyStore } from '../db/types.js';
import { looksLikeKey } from './format.js';

export function hashKey(raw: string): string {
  return hash('sha256', raw, 'hex');
}

/** The hash a bearer key is looked up by; undefined for text that cannot be a key (its format says so, no lookup). */
export function keyHashOf(raw: string): string | undefined {
  return looksLikeKey(raw) ? hashKey(raw) : undefined;
}

/** What a lookup found: the record with its hash also as bytes (made once, for every constant-time compare), or none. */
type Lookup = { record: ApiKeyRecord; digest: Buffer } | { record: undefined; digest?: undefined };

const NOT_FOUND: Lookup = { record: undefined };
const lookupOf = (record: ApiKeyRecord | undefined): Lookup =>
  record ? { record, digest: Buffer.from(record.hash, 'hex') } : NOT_FOUND;

/** Answer of `KeyResolver.peek` when the key has to be looked up (not cached, or the entry is too old). */
export const KEY_LOOKUP_NEEDED: unique symbol = Symbol('key lookup needed');

/**
 * How long past its TTL a cached lookup still tells a request's priority (peekForPriority). Bounded, so a key the change
 * feed failed to clear does not keep an old plan's priority for ever; long, so that a flood from more keys than come
 * round within the TTL is still judged by plan before any lookup.
 */
export const PRIORITY_STALE_MS = 10 * 60_000;

/** What a bearer key resolves to: the active key, `'expired'` (it existed and expired), or undefined (unknown, malformed, revoked). */
export type KeyResolution = ApiKeyRecord | 'expired' | undefined;

/**
 * Resolves bearer keys to key records on the request path. A key whose checksum does not match is refused without a
 * lookup. Lookups (found or not) are cached in-process for `ttlMs`, the safety net; `clear()` empties the cache at
 * once when a key changes (the change feed calls it on every replica). The cache is bounded.
 */
export class KeyResolver {
  readonly #cache = new Map<string, { lookup: Lookup; expires: number }>();
  readonly #inflight = new Map<string, Promise<Lookup>>();
  /** Moves on every clear(): a lookup that started before a clear must not refill the cache with what it read. */
  #generation = 0;

  constructor(
    private readonly store: Pick<ApiKeyStore, 'findByHash'>,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 10_000,
  ) {}

  /** The key whose hash (keyHashOf) is `hash`; undefined for a text that cannot be a key. */
  async resolve(hash: string | undefined): Promise<KeyResolution> {
    if (hash === undefined) return undefined;
    return this.#active(await this.#lookup(hash), hash);
  }

  /**
   * What `resolve` would answer, when it can answer without waiting (a malformed key, or a cached lookup); otherwise
   * `KEY_LOOKUP_NEEDED`. Lets the request path skip a promise per request for the common, cached case.
   */
  peek(hash: string | undefined): KeyResolution | typeof KEY_LOOKUP_NEEDED {
    return this.#cached(hash, 0);
  }

  /**
   * As `peek`, but a cached lookup up to PRIORITY_STALE_MS past its TTL still answers: for load shedding's choice of
   * what to refuse first, never to let a request in. A request this lets through has its key looked up afresh (peek,
   * resolve), so a stale answer can only change which plan is shed, and only for a key whose change did not reach
   * clear(). Without it, once the TTL passes every flooding key's request needs a lookup before shedding can know its
   * plan, and under overload those lookups are the work shedding is there to avoid.
   */
  peekForPriority(hash: string | undefined): KeyResolution | typeof KEY_LOOKUP_NEEDED {
    return this.#cached(hash, PRIORITY_STALE_MS);
  }

  /** Forgets every cached lookup (a key was revoked, rotated or changed somewhere). */
  clear(): void {
    this.#generation++;
    this.#cache.clear();
    this.#inflight.clear();
  }

  /** The cached lookup of `hash` while no more than `graceMs` past its TTL, as `resolve` would answer it. */
  #cached(hash: string | undefined, graceMs: number): KeyResolution | typeof KEY_LOOKUP_NEEDED {
    if (hash === undefined) return undefined;
    const cached = this.#cache.get(hash);
    if (!cached || cached.expires + graceMs <= this.now()) return KEY_LOOKUP_NEEDED;
    return this.#active(cached.lookup, hash);
  }

  #active({ record, digest }: Lookup, hash: string): KeyResolution {
    // The database found the row by its hash; compare once more in constant time before trusting it.
    if (!record || !timingSafeEqual(digest, Buffer.from(hash, 'hex'))) return undefined;
    if (record.revokedAt) return undefined;
    return record.expiresAt !== null && record.expiresAt.getTime() <= this.now() ? 'expired' : record;
  }

  async #lookup(hash: string): Promise<Lookup> {
    const cached = this.#cache.get(hash);
    if (cached && cached.expires > this.now()) return cached.lookup;
    const inflight = this.#inflight.get(hash);
    if (inflight) return inflight;
    const generation = this.#generation;
    const pending = this.store
      .findByHash(hash)
      .then((record) => {
        const lookup = lookupOf(record);
        if (this.ttlMs > 0 && generation === this.#generation) {
          this.#cache.delete(hash);
          if (this.#cache.size >= this.maxEntries) {
            const oldest = this.#cache.keys().next().value;
            if (oldest !== undefined) this.#cache.delete(oldest);
          }
          this.#cache.set(hash, { lookup, expires: this.now() + this.ttlMs });
        }
        return lookup;
      })
      .finally(() => {
        if (this.#inflight.get(hash) === pending) this.#inflight.delete(hash);
      });
    this.#inflight.set(hash, pending);
    return pending;
  }
}
