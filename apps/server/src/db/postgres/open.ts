import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { sessionUrl } from '../../config/database-url.js';
import { PrismaClient } from '../../generated/postgresql/client.js';
import {
  driverDatabase,
  writeOptions,
  type DatabaseConfig,
  type OpenDatabaseOptions,
  type PostgresTarget,
} from '../options.js';
import { prismaApiKeyStore } from '../prisma/key-store.js';
import type { Database } from '../types.js';
import { postgresKeyChanges } from './key-changes.js';
import { connectionSettings, migrateOver, trackedPool } from './pool.js';
import { postgresPetReads } from './reads.js';
import { postgresPetWrites } from './writes.js';

export async function openPostgres(
  target: PostgresTarget,
  config: DatabaseConfig,
  options: OpenDatabaseOptions,
): Promise<Database> {
  const limits = config.databaseLimits;
  const connection = await connectionSettings(target, limits, options.onPoolerWithoutTimeouts);
  const onError = (err: Error) => options.onConnectionError?.(err);
  const { pool, end } = trackedPool({ ...connection, max: limits.poolSize }, onError);
  try {
    if (options.migrate !== false) await migrateOver(target, onError);
  } catch (err) {
    await end();
    throw err;
  }
  // API keys through Prisma's model API, on the same pool as the pets' prepared SQL.
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  const reads = postgresPetReads(pool, {
    coalesce: config.coalesceReads,
    concurrency: config.readConcurrency,
    slotTimeoutMs: limits.poolTimeoutMs,
  });
  const writes = postgresPetWrites(pool, {
    ...writeOptions(config, options),
    onPurgeError: (err) => options.onConnectionError?.(err as Error),
  });
  // Readiness has a connection of its own: a pool saturated by slow queries is "busy", not "down", and must not take
  // every replica out of the load balancer at once.
  const readiness = new pg.Pool({
    ...connection,
    max: 1,
    idleTimeoutMillis: 0,
    ...(connection.statement_timeout !== undefined && { statement_timeout: 1000 }),
    query_timeout: 3000,
  });
  readiness.on('error', onError);
  // LISTEN needs a session of its own: one dedicated connection outside the pool, to DATABASE_DIRECT_URL when set.
  const keyChanges = postgresKeyChanges({ pool, listenUrl: sessionUrl(target), onError });
  return driverDatabase({
    provider: 'postgresql',
    reads,
    writes,
    apiKeys: prismaApiKeyStore(prisma),
    keyChanges,
    async ping() {
      await readiness.query('SELECT 1');
    },
    poolStats() {
      return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
    },
    async release() {
      await prisma.$disconnect();
      await Promise.all([end(), readiness.end()]);
    },
  });
}
