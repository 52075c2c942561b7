import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import { PrismaPg } from '@prisma/adapter-pg';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { sessionUrl, type DatabaseLimits, type DatabaseTarget } from '../config.js';
import { PrismaClient as PostgresPrismaClient } from '../generated/postgresql/client.js';
import { PrismaClient as SqlitePrismaClient } from '../generated/sqlite/client.js';
import { migratePostgres, migrateSqlite } from './migrate.js';
import { inProcessKeyChanges, postgresKeyChanges } from './key-changes.js';
import { prismaApiKeyStore } from './key-store.js';
import { prismaPetStore } from './pet-store.js';
import { postgresPetWrites, sqlitePetWrites } from './pet-writes.js';
import { postgresPetReads } from './postgres-reads.js';
import { sqlitePetReads } from './sqlite-reads.js';
import type { Database } from './types.js';

/** Closing twice (a shutdown path racing another) closes once; both callers wait for the same close. */
function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= close());
}

export interface OpenDatabaseOptions {
  /** Apply pending migrations first (default true). */
  migrate?: boolean;
  /** Postgres pool size (default 10). */
  poolSize?: number;
  /**
   * Told about connection-level errors that no query is waiting for (PostgreSQL restarted, a backend terminated):
   * the pool replaces such connections, so they must not crash the process. Default: ignored.
   */
  onConnectionError?: (err: Error) => void;
  /** SQLite: list pages kept in memory while the database is unchanged (default 128; 0 turns the cache off). */
  pageCacheEntries?: number;
  /** SQLite: pets whose JSON is kept to answer list pages from (default 20,000; 0: every page reads its rows). */
  petCacheEntries?: number;
  /** PostgreSQL: identical waiting reads share one query (default true). */
  coalesceReads?: boolean;
  /** PostgreSQL, with coalesceReads: read queries in flight at once (default 4). */
  readConcurrency?: number;
  /** How long idempotency records are kept at least (default 24 hours). */
  idempotencyTtlMs?: number;
  /** Expired idempotency records are purged in bounded steps at most this often (default 60 s; tests). */
  idempotencyPurgeEveryMs?: number;
  /** Told when the server (a pooler) refuses statement_timeout/lock_timeout as startup parameters. */
  onPoolerWithoutTimeouts?: () => void;
  /** Bounded waits (defaults: those of config.ts). */
  limits?: Partial<Omit<DatabaseLimits, 'poolSize'>>;
}

/** The defaults of config.ts, for callers that open a database without a configuration (tests, the key CLI). */
const DEFAULT_LIMITS: Omit<DatabaseLimits, 'poolSize'> = {
  poolTimeoutMs: 2000,
  statementTimeoutMs: 5000,
  lockTimeoutMs: 1000,
  sqliteBusyTimeoutMs: 1000,
};

const DAY_MS = 24 * 60 * 60 * 1000;
const writeOptions = (options: OpenDatabaseOptions) => ({
  ttlMs: options.idempotencyTtlMs ?? DAY_MS,
  ...(options.idempotencyPurgeEveryMs !== undefined ? { purgeEveryMs: options.idempotencyPurgeEveryMs } : {}),
});

/** SQLite file: created (with its folder) if missing, WAL journal so readers and the key CLI do not block the server. */
async function openSqlite(
  target: Extract<DatabaseTarget, { provider: 'sqlite' }>,
  options: OpenDatabaseOptions,
): Promise<Database> {
  if (target.file !== ':memory:') mkdirSync(dirname(target.file), { recursive: true });
  // This connection migrates, then serves the hot reads and the pet writes with statements prepared once (an
  // in-memory database is private to its connection, so it has to be this one). Migrating may wait for another
  // process's migration; afterwards better-sqlite3 waits for a lock synchronously, the whole process with it, so the
  // busy timeout is short.
  const timeout = options.limits?.sqliteBusyTimeoutMs ?? DEFAULT_LIMITS.sqliteBusyTimeoutMs;
  const conn = new BetterSqlite3(target.file, { timeout: Math.max(timeout, 5000) });
  try {
    if (target.file !== ':memory:') conn.pragma('journal_mode = WAL');
    if (options.migrate !== false) migrateSqlite(conn);
  } catch (err) {
    conn.close();
    throw err;
  }
  conn.pragma(`busy_timeout = ${timeout}`);
  const prisma = new SqlitePrismaClient({ adapter: new PrismaBetterSqlite3({ url: target.file, timeout }) });
  const reads = sqlitePetReads(conn, {
    pageCacheEntries: options.pageCacheEntries ?? 128,
    ...(options.petCacheEntries !== undefined ? { petCacheEntries: options.petCacheEntries } : {}),
  });
  const writes = sqlitePetWrites(conn, { ...writeOptions(options), onCommit: (pets) => reads.created(pets) });
  const keyChanges = inProcessKeyChanges();
  return {
    provider: 'sqlite',
    pets: prismaPetStore(prisma, reads, writes),
    readStats: () => reads.stats(),
    apiKeys: prismaApiKeyStore(prisma),
    keyChanges,
    async ping() {
      await prisma.$queryRawUnsafe('SELECT 1');
    },
    close: once(async () => {
      await keyChanges.close();
      await writes.closed();
      conn.close();
      await prisma.$disconnect();
    }),
  };
}

/**
 * Migrations run on a connection of their own, closed after: over `DATABASE_DIRECT_URL` when it is set, else over
 * `DATABASE_URL` (either works behind a transaction pooler: nothing in them outlives a transaction), and without the
 * request path's statement and lock timeouts: a replica waits for another's migration lock, and a migration may take
 * longer than any query should.
 */
async function migrateOver(
  target: Extract<DatabaseTarget, { provider: 'postgresql' }>,
  onError: (err: Error) => void,
): Promise<void> {
  const client = new pg.Client({ connectionString: sessionUrl(target), connectionTimeoutMillis: 5000 });
  client.on('error', onError);
  await client.connect();
  try {
    await migratePostgres(client);
  } finally {
    await client.end();
  }
}

/**
 * Whether the server accepts statement_timeout and lock_timeout in the startup packet. PgBouncer refuses startup
 * parameters it does not know ("unsupported startup parameter"): behind it only pg's client-side query timeout and the
 * pool timeout bound the waits, and the server-side timeouts belong on the role (`ALTER ROLE ... SET`).
 */
async function acceptsStartupTimeouts(url: string, timeouts: object, onRefused?: () => void): Promise<boolean> {
  if (Object.keys(timeouts).length === 0) return true;
  const probe = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000, ...timeouts });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return true;
  } catch (err) {
    if (!/unsupported startup parameter/i.test((err as Error).message)) throw err;
    onRefused?.();
    return false;
  } finally {
    await probe.end().catch(() => undefined);
  }
}

async function openPostgres(
  target: Extract<DatabaseTarget, { provider: 'postgresql' }>,
  options: OpenDatabaseOptions,
): Promise<Database> {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  // Every wait is bounded, set per connection in its startup packet (no session SET, which PgBouncer's transaction
  // mode would not keep): the pool's wait for a connection, the server's statement and lock timeouts, and pg's own
  // query timeout a little later, for a server that stopped answering altogether.
  const serverTimeouts = {
    ...(limits.statementTimeoutMs > 0 && { statement_timeout: limits.statementTimeoutMs }),
    ...(limits.lockTimeoutMs > 0 && { lock_timeout: limits.lockTimeoutMs }),
  };
  const connection: pg.PoolConfig = {
    connectionString: target.url,
    connectionTimeoutMillis: limits.poolTimeoutMs,
    keepAlive: true,
    ...(limits.statementTimeoutMs > 0 && { query_timeout: limits.statementTimeoutMs + 2000 }),
    ...((await acceptsStartupTimeouts(target.url, serverTimeouts, options.onPoolerWithoutTimeouts)) && serverTimeouts),
  };
  const pool = new pg.Pool({ ...connection, max: options.poolSize ?? 10 });
  // Without listeners, an 'error' on an idle pooled connection (or on one the pool has let go while it closes) is an
  // uncaught exception. Queries still see their own errors through their promises.
  const onError = (err: Error) => options.onConnectionError?.(err);
  pool.on('error', onError);
  // close() waits until every connection's socket has really closed: pool.end() resolves before that.
  const open = new Set<Promise<void>>();
  pool.on('connect', (client) => {
    client.on('error', onError);
    const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
    open.add(ended);
    void ended.then(() => open.delete(ended));
  });
  try {
    if (options.migrate !== false) await migrateOver(target, onError);
  } catch (err) {
    await pool.end();
    await Promise.all(open);
    throw err;
  }
  const prisma = new PostgresPrismaClient({ adapter: new PrismaPg(pool) }) as unknown as SqlitePrismaClient;
  const reads = postgresPetReads(pool, {
    coalesce: options.coalesceReads ?? true,
    concurrency: options.readConcurrency ?? 4,
    slotTimeoutMs: limits.poolTimeoutMs,
  });
  const writes = postgresPetWrites(pool, {
    ...writeOptions(options),
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
  return {
    provider: 'postgresql',
    pets: prismaPetStore(prisma, reads, writes),
    readStats: () => reads.stats(),
    apiKeys: prismaApiKeyStore(prisma),
    keyChanges,
    async ping() {
      await readiness.query('SELECT 1');
    },
    poolStats() {
      return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
    },
    close: once(async () => {
      await keyChanges.close();
      await writes.closed();
      await prisma.$disconnect();
      await Promise.all([pool.end(), readiness.end()]);
      await Promise.all(open);
    }),
  };
}

/** Opens the database the URL names, migrating it first. Handlers receive the returned stores and nothing else. */
export function openDatabase(target: DatabaseTarget, options: OpenDatabaseOptions = {}): Promise<Database> {
  return target.provider === 'sqlite' ? openSqlite(target, options) : openPostgres(target, options);
}

/** Errors that mean "the database is not reachable yet" (worth retrying at start-up), as opposed to a wrong setup. */
const TRANSIENT = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P03',
  '53300',
  'SQLITE_BUSY',
]);

function isTransient(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  if (typeof e?.code === 'string' && TRANSIENT.has(e.code)) return true;
  return (
    typeof e?.message === 'string' && /timeout exceeded when trying to connect|Connection terminated/i.test(e.message)
  );
}

/** Opens the database, retrying while it is unreachable for at most `timeoutMs`; then gives up with the last error. */
export async function openDatabaseWithRetry(
  target: DatabaseTarget,
  options: OpenDatabaseOptions & { timeoutMs: number; onRetry?: (err: unknown, attempt: number) => void },
): Promise<Database> {
  const deadline = Date.now() + options.timeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await openDatabase(target, options);
    } catch (err) {
      if (!isTransient(err) || Date.now() + 1000 > deadline) throw err;
      options.onRetry?.(err, attempt);
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(1000 * attempt, 5000, Math.max(deadline - Date.now(), 0))),
      );
    }
  }
}
