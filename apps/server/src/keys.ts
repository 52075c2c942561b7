import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { customLimitsProblem, type Plan } from '@animal-store/rate-limit';
import type { ApiKeyRecord, ApiKeyStore, NewApiKey } from './db/types.js';

/** Raw keys look like `ask_` + 43 base64url characters (256 random bits). */
export const KEY_PREFIX = 'ask_';
const KEY_PATTERN = /^ask_[A-Za-z0-9_-]{43}$/;
/** Characters of the raw key kept in clear to tell keys apart in listings: `ask_` + 8. */
const DISPLAY_PREFIX_LENGTH = KEY_PREFIX.length + 8;

export function generateRawKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function hashKey(raw: string): string {
  return hash('sha256', raw, 'hex');
}

export function looksLikeKey(raw: string): boolean {
  return KEY_PATTERN.test(raw);
}

export interface CreateKeyInput {
  plan: Plan;
  name?: string | undefined;
  perMinute?: number | undefined;
  perDay?: number | undefined;
}

/** Creates a key; the raw key is returned once and never stored. */
export async function createApiKey(
  store: ApiKeyStore,
  input: CreateKeyInput,
): Promise<{ raw: string; record: ApiKeyRecord }> {
  const problem = customLimitsProblem(input.plan, input);
  if (problem) throw new Error(problem);
  const raw = generateRawKey();
  const key: NewApiKey = {
    prefix: raw.slice(0, DISPLAY_PREFIX_LENGTH),
    hash: hashKey(raw),
    name: input.name ?? null,
    plan: input.plan,
    perMinute: input.perMinute ?? null,
    perDay: input.perDay ?? null,
  };
  return { raw, record: await store.create(key) };
}

/** Answer of `KeyResolver.peek` when the key has to be looked up (not cached, or expired). */
export const KEY_LOOKUP_NEEDED: unique symbol = Symbol('key lookup needed');

/**
 * Resolves bearer keys to key records on the request path. Lookups (found or not) are cached in-process for `ttlMs`,
 * so a key revoked through the CLI (another process) stops working within `ttlMs`. The cache is bounded.
 */
export class KeyResolver {
  readonly #cache = new Map<string, { record: ApiKeyRecord | undefined; expires: number }>();
  readonly #inflight = new Map<string, Promise<ApiKeyRecord | undefined>>();

  constructor(
    private readonly store: ApiKeyStore,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 10_000,
  ) {}

  /** The active key record for a raw key, or undefined when the key is unknown, malformed or revoked. */
  async resolve(raw: string): Promise<ApiKeyRecord | undefined> {
    if (!looksLikeKey(raw)) return undefined;
    const hash = hashKey(raw);
    return KeyResolver.#active(await this.#lookup(hash), hash);
  }

  /**
   * What `resolve` would answer, when it can answer without waiting (a malformed key, or a cached lookup); otherwise
   * `KEY_LOOKUP_NEEDED`. Lets the request path skip a promise per request for the common, cached case.
   */
  peek(raw: string): ApiKeyRecord | undefined | typeof KEY_LOOKUP_NEEDED {
    if (!looksLikeKey(raw)) return undefined;
    const hash = hashKey(raw);
    const cached = this.#cache.get(hash);
    if (!cached || cached.expires <= this.now()) return KEY_LOOKUP_NEEDED;
    return KeyResolver.#active(cached.record, hash);
  }

  static #active(record: ApiKeyRecord | undefined, hash: string): ApiKeyRecord | undefined {
    // The database found the row by its hash; compare once more in constant time before trusting it.
    if (!record || !timingSafeEqual(Buffer.from(record.hash, 'hex'), Buffer.from(hash, 'hex'))) return undefined;
    return record.revokedAt ? undefined : record;
  }

  async #lookup(hash: string): Promise<ApiKeyRecord | undefined> {
    const now = this.now();
    const cached = this.#cache.get(hash);
    if (cached && cached.expires > now) return cached.record;
    const pending = this.#inflight.get(hash);
    if (pending) return pending;
    const lookup = this.store
      .findByHash(hash)
      .then((record) => {
        if (this.ttlMs > 0) {
          this.#cache.delete(hash);
          if (this.#cache.size >= this.maxEntries) {
            const oldest = this.#cache.keys().next().value;
            if (oldest !== undefined) this.#cache.delete(oldest);
          }
          this.#cache.set(hash, { record, expires: this.now() + this.ttlMs });
        }
        return record;
      })
      .finally(() => this.#inflight.delete(hash));
    this.#inflight.set(hash, lookup);
    return lookup;
  }
}
