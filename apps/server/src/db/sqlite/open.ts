import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import BetterSqlite3 from 'better-sqlite3';
import { PrismaClient } from '../../generated/sqlite/client.js';
import {
  driverDatabase,
  writeOptions,
  type DatabaseConfig,
  type OpenDatabaseOptions,
  type SqliteTarget,
} from '../options.js';
import { prismaApiKeyStore } from '../prisma/key-store.js';
import type { Database } from '../types.js';
import { inProcessKeyChanges } from './key-changes.js';
import { sqliteLastUseWrites } from './last-used.js';
import { migrateSqlite } from './migrate.js';
import { sqlitePetReads } from './reads.js';
import { sqlitePetWrites } from './writes.js';

/** SQLite file: created (with its folder) if missing, WAL journal so readers and the key CLI do not block the server. */
export async function openSqlite(
  target: SqliteTarget,
  config: DatabaseConfig,
  options: OpenDatabaseOptions,
): Promise<Database> {
  if (target.file !== ':memory:') mkdirSync(dirname(target.file), { recursive: true });
  // This connection migrates, then serves the hot reads and the pet writes with statements prepared once (an
  // in-memory database is private to its connection, so it has to be this one). Migrating may wait for another
  // process's migration; afterwards better-sqlite3 waits for a lock synchronously, the whole process with it, so the
  // busy timeout is short.
  const timeout = config.databaseLimits.sqliteBusyTimeoutMs;
  const conn = new BetterSqlite3(target.file, { timeout: Math.max(timeout, 5000) });
  try {
    if (target.file !== ':memory:') conn.pragma('journal_mode = WAL');
    if (options.migrate !== false) migrateSqlite(conn);
  } catch (err) {
    conn.close();
    throw err;
  }
  conn.pragma(`busy_timeout = ${timeout}`);
  // API keys through Prisma's model API, on a connection of its own; their last-use times on this one (last-used.ts).
  const prisma = new PrismaClient({ adapter: new PrismaBetterSqlite3({ url: target.file, timeout }) });
  const reads = sqlitePetReads(conn, {
    pageCacheEntries: config.pageCacheEntries,
    petCacheEntries: config.petCacheEntries,
  });
  const writes = sqlitePetWrites(conn, { ...writeOptions(config, options), onCommit: (pets) => reads.created(pets) });
  return driverDatabase({
    provider: 'sqlite',
    reads,
    writes,
    apiKeys: { ...prismaApiKeyStore(prisma), ...sqliteLastUseWrites(conn) },
    keyChanges: inProcessKeyChanges(),
    async ping() {
      await prisma.$queryRawUnsafe('SELECT 1');
    },
    async release() {
      conn.close();
      await prisma.$disconnect();
    },
  });
}
