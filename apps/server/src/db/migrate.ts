import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import type pg from 'pg';
import { SERVER_ROOT } from '../config.js';

/**
 * Applies the SQL migrations kept in Prisma's folder layout (prisma/<provider>/migrations/<timestamp>_<name>/migration.sql)
 * and records them in a `_prisma_migrations` table shaped as Prisma Migrate's, so `prisma migrate deploy` sees the same
 * history where its engine can run. Each migration runs in its own transaction with its record.
 */
export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export function migrationsDir(provider: 'sqlite' | 'postgresql'): string {
  return join(SERVER_ROOT, 'prisma', provider, 'migrations');
}

export function readMigrations(dir: string): Migration[] {
  if (!existsSync(dir)) throw new Error(`migrations folder missing: ${dir}`);
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, 'migration.sql')))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

type Applied = { migration_name: string; checksum: string; finished_at: unknown; rolled_back_at: unknown };

/** Which migrations still have to run; refuses a history that was edited or left half-applied. */
function pending(all: Migration[], applied: Applied[]): Migration[] {
  const done = new Map<string, Applied>();
  for (const row of applied) {
    if (row.rolled_back_at != null) continue;
    if (row.finished_at == null) {
      throw new Error(
        `migration ${row.migration_name} was started but did not finish; resolve it before starting the service`,
      );
    }
    done.set(row.migration_name, row);
  }
  for (const row of done.values()) {
    const local = all.find((m) => m.name === row.migration_name);
    if (!local) throw new Error(`the database has migration ${row.migration_name}, which this build does not know`);
    if (local.checksum !== row.checksum)
      throw new Error(`migration ${row.migration_name} was modified after it was applied`);
  }
  return all.filter((m) => !done.has(m.name));
}

const SQLITE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    TEXT PRIMARY KEY NOT NULL,
    "checksum"              TEXT NOT NULL,
    "finished_at"           DATETIME,
    "migration_name"        TEXT NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        DATETIME,
    "started_at"            DATETIME NOT NULL DEFAULT current_timestamp,
    "applied_steps_count"   INTEGER UNSIGNED NOT NULL DEFAULT 0
)`;

/** SQLite: one IMMEDIATE transaction holds the write lock, so a server and the key CLI starting together do not race. */
export function migrateSqlite(db: BetterSqlite3.Database, dir = migrationsDir('sqlite')): string[] {
  const all = readMigrations(dir);
  const run = db.transaction(() => {
    db.exec(SQLITE_TABLE);
    const applied = db
      .prepare('SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"')
      .all() as Applied[];
    const todo = pending(all, applied);
    const insert = db.prepare(
      'INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES (?, ?, ?, ?, ?, 1)',
    );
    for (const m of todo) {
      const started = Date.now();
      db.exec(m.sql);
      insert.run(randomUUID(), m.checksum, Date.now(), m.name, started);
    }
    return todo.map((m) => m.name);
  });
  return run.immediate();
}

const POSTGRES_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
)`;

/** The advisory lock key Prisma Migrate itself takes, so our replicas and `prisma migrate deploy` exclude each other. */
const ADVISORY_LOCK_KEY = 72707369;

/**
 * PostgreSQL: each migration commits with its record in one transaction that first takes the advisory lock for the
 * transaction (`pg_advisory_xact_lock`, the same key space as Prisma's session lock): replicas starting at once
 * serialise, and nothing outlives a transaction, so this works behind a transaction-pooling PgBouncer too.
 */
export async function migratePostgres(client: pg.ClientBase, dir = migrationsDir('postgresql')): Promise<string[]> {
  const all = readMigrations(dir);
  const applied: string[] = [];
  for (;;) {
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock($1)', [ADVISORY_LOCK_KEY]);
      await client.query(POSTGRES_TABLE);
      const { rows } = await client.query<Applied>(
        'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"',
      );
      const next = pending(all, rows)[0];
      if (next === undefined) {
        await client.query('COMMIT');
        return applied;
      }
      const started = new Date();
      await client.query(next.sql);
      await client.query(
        'INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES ($1, $2, now(), $3, $4, 1)',
        [randomUUID(), next.checksum, next.name, started],
      );
      await client.query('COMMIT');
      applied.push(next.name);
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }
}
