import type { DatabaseTarget } from '../config/database-url.js';
import type { Config } from '../config/load.js';
import { petStore, type PetReads, type PetWrites } from './pets/store.js';
import type { PetWritesOptions } from './pets/writes.js';
import type { Database } from './types.js';

/**
 * What the data layer takes from the configuration, every field required: config/env.ts is the one source of their
 * defaults, and a caller without a configuration takes them from config/defaults.ts (or `loadConfig({ DATABASE_URL })`).
 */
export type DatabaseConfig = Pick<
  Config,
  | 'database'
  | 'databaseLimits'
  | 'pageCacheEntries'
  | 'petCacheEntries'
  | 'coalesceReads'
  | 'readConcurrency'
  | 'idempotencyTtlMs'
>;

export type SqliteTarget = Extract<DatabaseTarget, { provider: 'sqlite' }>;
export type PostgresTarget = Extract<DatabaseTarget, { provider: 'postgresql' }>;

/** How a database is opened, beyond its configuration: hooks for the process that opens it, and test switches. */
export interface OpenDatabaseOptions {
  /** Apply pending migrations first (default true). */
  migrate?: boolean;
  /**
   * Told about connection-level errors that no query is waiting for (PostgreSQL restarted, a backend terminated):
   * the pool replaces such connections, so they must not crash the process. Default: ignored.
   */
  onConnectionError?: (err: Error) => void;
  /** Told when the server (a pooler) refuses statement_timeout/lock_timeout as startup parameters. */
  onPoolerWithoutTimeouts?: () => void;
  /** Expired idempotency records are purged in bounded steps at most this often (tests; default 60 s). */
  idempotencyPurgeEveryMs?: number;
}

/** The pet writers' options of a configuration. */
export const writeOptions = (config: DatabaseConfig, options: OpenDatabaseOptions): PetWritesOptions => ({
  ttlMs: config.idempotencyTtlMs,
  ...(options.idempotencyPurgeEveryMs !== undefined ? { purgeEveryMs: options.idempotencyPurgeEveryMs } : {}),
});

/** What a driver opened: its pet reads and writes, its key store and feed, and how to reach and release it. */
export interface DriverParts extends Pick<Database, 'provider' | 'apiKeys' | 'keyChanges' | 'ping' | 'poolStats'> {
  reads: PetReads;
  writes: PetWrites;
  /** Closes the driver's connections, once the key feed is closed and every pending write has committed. */
  release(): Promise<void>;
}

/** The Database the rest of the server sees, from a driver's parts. Closing twice closes once. */
export function driverDatabase(parts: DriverParts): Database {
  const { reads, writes, keyChanges } = parts;
  return {
    provider: parts.provider,
    pets: petStore(reads, writes),
    apiKeys: parts.apiKeys,
    keyChanges,
    ping: () => parts.ping(),
    ...(parts.poolStats && { poolStats: () => parts.poolStats!() }),
    readStats: () => reads.stats(),
    close: closeOnce(async () => {
      await keyChanges.close();
      await writes.closed();
      await parts.release();
    }),
  };
}

/** Closing twice (a shutdown path racing another) closes once; both callers wait for the same close. */
function closeOnce(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= close());
}
