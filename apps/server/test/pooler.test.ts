// The database layer behind PgBouncer in transaction mode (the run's global setup starts it on 6432): a server
// connection belongs to a client for one transaction only, so nothing may rely on a session.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load.js';
import { openDatabase } from '../src/db/database.js';
import { migratePostgres } from '../src/db/postgres/migrate.js';
import { createTestDatabase, type TestDatabase } from './helpers.js';

const ADVISORY_LOCK_KEY = 72707369;
const ADMIN_HOST = new URL(process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres').host;

/** The URL of the same database on PostgreSQL itself, bypassing the pooler. */
function direct(pooled: string): string {
  const url = new URL(pooled);
  url.host = ADMIN_HOST;
  url.search = '';
  return url.toString();
}
const urlOf = (database: TestDatabase) => (database.target as { url: string }).url;

describe('PostgreSQL through PgBouncer in transaction mode', () => {
  let database: TestDatabase;
  let pooledUrl: string;
  beforeAll(async () => {
    database = await createTestDatabase('pgbouncer');
    pooledUrl = urlOf(database);
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('answers 600 concurrent reads, one query each, and a write among them, without an error', async () => {
    for (const url of [pooledUrl, `${pooledUrl}?pgbouncer=true`]) {
      const db = await openDatabase({ ...loadConfig({ DATABASE_URL: url }), coalesceReads: false });
      try {
        const pets = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            db.pets.create({ name: `p${i}`, categoryId: i + 1, status: i % 2 ? 'sold' : 'available' }),
          ),
        );
        const reads = await Promise.all(
          Array.from({ length: 600 }, (_, i) =>
            i % 3 === 0
              ? db.pets.get(pets[i % 10]!.id)
              : db.pets.list({
                  limit: 1 + (i % 20),
                  status: i % 2 ? 'sold' : undefined,
                  afterId: i % 5 ? undefined : pets[0]!.id,
                }),
          ),
        );
        expect(reads).toHaveLength(600);
        expect(reads[0]).toEqual(pets[0]);
      } finally {
        await db.close();
      }
    }
  });

  describe('migrations', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'animal-store-migrations-'));
      const write = (name: string, sql: string) => {
        mkdirSync(join(dir, name));
        writeFileSync(join(dir, name, 'migration.sql'), sql);
      };
      write('20260101000000_one', 'CREATE TABLE "One" (id INT PRIMARY KEY); SELECT pg_sleep(0.2);');
      write('20260101000001_two', 'CREATE TABLE "Two" (id INT PRIMARY KEY); SELECT pg_sleep(0.2);');
      write('20260101000002_three', 'ALTER TABLE "One" ADD COLUMN name TEXT;');
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('serialise four replicas starting at once: each migration once, no lock left behind', async () => {
      const fresh = await createTestDatabase('pgbouncer');
      const clients = Array.from({ length: 4 }, () => new pg.Client({ connectionString: urlOf(fresh) }));
      await Promise.all(clients.map((c) => c.connect()));
      try {
        const applied = await Promise.all(clients.map((c) => migratePostgres(c, dir)));
        expect(applied.flat().sort()).toEqual(['20260101000000_one', '20260101000001_two', '20260101000002_three']);
        const { rows } = await clients[0]!.query<{ migration_name: string }>(
          'SELECT migration_name FROM "_prisma_migrations" ORDER BY 1',
        );
        expect(rows.map((r) => r.migration_name)).toEqual([
          '20260101000000_one',
          '20260101000001_two',
          '20260101000002_three',
        ]);
        // A session-level lock taken through the pooler would stay held by a pooled server connection.
        const locks = await clients[0]!.query('SELECT 1 FROM pg_locks WHERE locktype = $1 AND objid = $2', [
          'advisory',
          ADVISORY_LOCK_KEY,
        ]);
        expect(locks.rowCount).toBe(0);
      } finally {
        await Promise.all(clients.map((c) => c.end()));
        await fresh.drop();
      }
    });

    it('wait while Prisma Migrate holds its session lock on a direct connection', async () => {
      const fresh = await createTestDatabase('pgbouncer');
      const prismaMigrate = new pg.Client({ connectionString: direct(urlOf(fresh)) });
      const replica = new pg.Client({ connectionString: urlOf(fresh) });
      await Promise.all([prismaMigrate.connect(), replica.connect()]);
      try {
        await prismaMigrate.query('SELECT pg_advisory_lock($1)', [ADVISORY_LOCK_KEY]);
        let done = false;
        const migrating = migratePostgres(replica, dir).then((names) => {
          done = true;
          return names;
        });
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(done).toBe(false);
        await prismaMigrate.query('SELECT pg_advisory_unlock($1)', [ADVISORY_LOCK_KEY]);
        expect(await migrating).toHaveLength(3);
      } finally {
        await Promise.all([prismaMigrate.end(), replica.end()]);
        await fresh.drop();
      }
    });
  });

  it('migrates over DATABASE_DIRECT_URL when it is set, and serves over DATABASE_URL', async () => {
    const fresh = await createTestDatabase('pgbouncer');
    try {
      const pooled = urlOf(fresh);
      const unreachable = loadConfig({
        DATABASE_URL: pooled,
        DATABASE_DIRECT_URL: 'postgresql://postgres@127.0.0.1:1/nowhere',
      });
      await expect(openDatabase(unreachable)).rejects.toThrow(/ECONNREFUSED|connect/);
      const db = await openDatabase(
        loadConfig({ DATABASE_URL: `${pooled}?pgbouncer=true`, DATABASE_DIRECT_URL: direct(pooled) }),
      );
      try {
        const pet = await db.pets.create({ name: 'Direct', categoryId: 1 });
        expect(await db.pets.get(pet.id)).toEqual(pet);
      } finally {
        await db.close();
      }
    } finally {
      await fresh.drop();
    }
  });
});
