import type { NewPet, Pet, PetStatus, PlanName, Scope } from '@animal-store/contract';
import type { PetPage } from './pets/page.js';

export interface ApiKeyRecord {
  id: number;
  prefix: string;
  hash: string;
  name: string | null;
  plan: PlanName;
  perMinute: number | null;
  perDay: number | null;
  /** Requests in flight at once, when an enterprise key sets its own (null: the plan's). */
  concurrentRequests: number | null;
  createdAt: Date;
  revokedAt: Date | null;
  /** What the key may do (one or both). */
  scopes: readonly Scope[];
  expiresAt: Date | null;
  /** Last accepted request, to the minute (written in batches). */
  lastUsedAt: Date | null;
  /** Last accepted call of a deprecated operation, to the minute (written in batches). */
  lastDeprecatedCallAt: Date | null;
  /**
   * The first key of its rotation lineage (null: this key is the first). A lineage is one key with at most two
   * secrets: it shares counters, bans, idempotency records, name, scopes and limits.
   */
  lineageId: number | null;
  /** When this key was rotated out (its successor made); null on the lineage's current key. */
  rotatedAt: Date | null;
}

export type NewApiKeyRow = Pick<
  ApiKeyRecord,
  | 'prefix'
  | 'hash'
  | 'name'
  | 'plan'
  | 'perMinute'
  | 'perDay'
  | 'concurrentRequests'
  | 'scopes'
  | 'expiresAt'
  | 'lineageId'
>;

/** What an update may change. */
export type ApiKeyUpdate = Partial<
  Pick<ApiKeyRecord, 'name' | 'scopes' | 'perMinute' | 'perDay' | 'concurrentRequests' | 'expiresAt'>
>;

export interface ListPetsOptions {
  limit: number;
  status?: PetStatus | undefined;
  /** Only pets with an id greater than this (keyset paging). */
  afterId?: number | undefined;
}

/** Data access for pets. Handlers see only this; which database is behind it is not their business. */
export interface PetStore {
  /**
   * The page of up to `limit` pets ordered by id ascending, as its JSON answer, and whether more follow. It may be
   * shared with other callers (a cached page): frozen.
   */
  list(options: ListPetsOptions): Promise<PetPage>;
  /** Creates a pet; answered once it is committed (creates arriving together share one commit). */
  create(pet: NewPet): Promise<Pet>;
  /**
   * Creates a pet once per (API key, Idempotency-Key): the answer is stored with the pet in the same commit, and a
   * key that already has a record gets that record instead of a second pet.
   */
  createOnce(pet: NewPet, scope: IdempotencyScope): Promise<OnceOutcome>;
  get(id: number): Promise<Pet | undefined>;
}

/** Who sent a create and under which `Idempotency-Key`, with the fingerprint of what it asked for. */
export interface IdempotencyScope {
  /** The rotation lineage of the sending key (its first key's id): a retry with the rotated key is the same scope. */
  lineageId: number;
  key: string;
  /** Same fingerprint, same request (see http/idempotency.ts). */
  fingerprint: string;
  /** The pet's URL is this plus its id (`/v1/pets/`). */
  locationPrefix: string;
}

/** The answer kept for a key, replayed byte for byte. */
export interface StoredAnswer {
  status: number;
  location: string;
  body: string;
}

/** What a create under an idempotency key came to. */
export type OnceOutcome =
  /** This request created the pet; `answer` was stored with it, in the same commit. */
  | { kind: 'created'; pet: Pet; answer: StoredAnswer }
  /** The key already has a committed record: its answer, and the fingerprint of the request that made it. */
  | { kind: 'stored'; fingerprint: string; answer: StoredAnswer }
  /** Another request with this key is being committed right now (here or on another replica). */
  | { kind: 'in_use' };

export interface ApiKeyStore {
  findByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  findById(id: number): Promise<ApiKeyRecord | undefined>;
  create(key: NewApiKeyRow): Promise<ApiKeyRecord>;
  /** Keys ordered by id, after `afterId`, at most `limit` of them (all when absent). */
  list(page?: { limit?: number | undefined; afterId?: number | undefined }): Promise<ApiKeyRecord[]>;
  /** The keys of a lineage (its first key's id), oldest first. */
  lineage(lineageId: number): Promise<ApiKeyRecord[]>;
  /**
   * In one transaction: changes key `id` if it is its lineage's current key (not rotated out), not revoked and active at
   * `now`, and gives the lineage's other active key the same name, scopes and limits, and an end no later than a new
   * expiry. Undefined (and nothing changed) otherwise.
   */
  update(id: number, changes: ApiKeyUpdate, now: Date): Promise<ApiKeyRecord | undefined>;
  /** Revokes by id or by hash; returns the record, or undefined when there is none. Revoking twice keeps the first time. */
  revoke(match: { id: number } | { hash: string }, at: Date): Promise<ApiKeyRecord | undefined>;
  /**
   * In one transaction, if key `id` is its lineage's current key, not revoked and active at `now`: marks it rotated at
   * `now` with its end at `oldExpiresAt`, ends now any older key of the lineage still in its overlap (a lineage has at
   * most two active keys), and creates `next`. Returns the new key, or undefined (and changes nothing) otherwise.
   */
  rotate(id: number, next: NewApiKeyRow, at: { oldExpiresAt: Date; now: Date }): Promise<ApiKeyRecord | undefined>;
  /** Sets `lastUsedAt` of these keys to `at` where it is older (or unset). */
  recordLastUsed(at: Date, ids: readonly number[]): Promise<void>;
  /** Sets `lastDeprecatedCallAt` of these keys to `at` where it is older (or unset). */
  recordLastDeprecatedCall(at: Date, ids: readonly number[]): Promise<void>;
}

/** What the hot read path did since the process started. */
export interface ReadStats {
  /** SQLite list page cache: pages answered from memory, and pages read. */
  pageCache?: { hits: number; misses: number };
  /** PostgreSQL batched reads: pages and gets answered, and queries sent for them (one per batch). */
  coalescing?: { reads: number; queries: number };
}

export interface Database {
  readonly provider: 'sqlite' | 'postgresql';
  readonly pets: PetStore;
  readonly apiKeys: ApiKeyStore;
  /** Announces key changes to every process on this database (sqlite/ and postgres/key-changes.ts). */
  readonly keyChanges: KeyChangeFeed;
  /** Throws when the database cannot be reached. */
  ping(): Promise<void>;
  /** Connection pool use, where there is a pool (PostgreSQL). */
  poolStats?(): { total: number; idle: number; waiting: number };
  /** Counters of the hot read path since start (for /metrics). */
  readStats?(): ReadStats;
  close(): Promise<void>;
}

/**
 * Tells every process serving the database that API keys changed (revoked, rotated, re-scoped...), so that each one
 * empties its key cache at once instead of waiting for the cache's TTL, which stays as the safety net.
 */
export interface KeyChangeFeed {
  /** Announces a change of the key: this process's listeners hear it at once, other processes' within about a second. */
  publish(keyId: number): Promise<void>;
  /**
   * Calls `listener` on every change, and whenever changes may have been missed (the feed's connection came back).
   * Returns the unsubscribe function.
   */
  subscribe(listener: () => void): () => void;
  /** Resolves once changes made by other processes are heard (PostgreSQL: the LISTEN is in place). */
  ready(): Promise<void>;
  close(): Promise<void>;
}
