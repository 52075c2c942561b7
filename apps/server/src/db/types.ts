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
  create(pet: NewPet): Promise<Pet>;
  get(id: number): Promise<Pet | undefined>;
}

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
