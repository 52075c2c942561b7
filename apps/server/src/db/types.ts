import type { NewPet, Pet, PetStatus } from '@animal-store/contract';
import type { Plan } from '@animal-store/rate-limit';

export interface ApiKeyRecord {
  id: number;
  prefix: string;
  hash: string;
  name: string | null;
  plan: Plan;
  perMinute: number | null;
  perDay: number | null;
  createdAt: Date;
  revokedAt: Date | null;
}

export type NewApiKey = Pick<ApiKeyRecord, 'prefix' | 'hash' | 'name' | 'plan' | 'perMinute' | 'perDay'>;

export interface ListPetsOptions {
  limit: number;
  status?: PetStatus | undefined;
  /** Only pets with an id greater than this (keyset paging). */
  afterId?: number | undefined;
}

/** Data access for pets. Handlers see only this; which database is behind it is not their business. */
export interface PetStore {
  /** Up to `limit` pets ordered by id ascending. They may be shared with other callers (a cached page): read-only. */
  list(options: ListPetsOptions): Promise<readonly Pet[]>;
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
  apiKeyId: number;
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
  create(key: NewApiKey): Promise<ApiKeyRecord>;
  list(): Promise<ApiKeyRecord[]>;
  /** Revokes by id or by hash; returns the record, or undefined when there is none. Revoking twice keeps the first time. */
  revoke(match: { id: number } | { hash: string }, at: Date): Promise<ApiKeyRecord | undefined>;
}

/** What the hot read path did since the process started. */
export interface ReadStats {
  /** SQLite list page cache: pages answered from memory, and pages read. */
  pageCache?: { hits: number; misses: number };
  /** PostgreSQL read queue: reads answered, and queries sent for them (fewer when identical reads shared one). */
  coalescing?: { reads: number; queries: number };
}

export interface Database {
  readonly provider: 'sqlite' | 'postgresql';
  readonly pets: PetStore;
  readonly apiKeys: ApiKeyStore;
  /** Throws when the database cannot be reached. */
  ping(): Promise<void>;
  /** Connection pool use, where there is a pool (PostgreSQL). */
  poolStats?(): { total: number; idle: number; waiting: number };
  /** Counters of the hot read path since start (for /metrics). */
  readStats?(): ReadStats;
  close(): Promise<void>;
}
