import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { APPLIED_SQL, migrationsDir, pending, readMigrations, type Applied } from '../migrations.js';

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
      const { rows } = await client.query<Applied>(APPLIED_SQL);
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
