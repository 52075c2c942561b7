import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { migrationsDir } from '../src/db/migrations.js';
import { migratePostgres } from '../src/db/postgres/migrate.js';
import { migrateSqlite } from '../src/db/sqlite/migrate.js';
import { createTestDatabase } from './helpers.js';

/** The migrations before the lineage one, in a folder of their own: a database as it stood before it. */
function migrationsBefore(provider: 'sqlite' | 'postgresql'): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'lineage-migration-'));
  cpSync(migrationsDir(provider), dir, { recursive: true, filter: (src) => !/_lineage(\/|$)/.test(src) });
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

const KEYS = `INSERT INTO "ApiKey" ("id", "prefix", "hash", "plan", "createdAt", "lineageId") VALUES
  (1, 'ask_1', 'h1', 'pro', $T1, NULL), (2, 'ask_2', 'h2', 'pro', $T2, 1), (3, 'ask_3', 'h3', 'pro', $T3, 1),
  (4, 'ask_4', 'h4', 'free', $T1, NULL)`;
const RECORDS = `INSERT INTO "IdempotencyRecord"
  ("apiKeyId", "key", "fingerprint", "petId", "status", "location", "body", "createdAt", "expiresAt") VALUES
  (1, 'a', 'f', 1, 201, '/v1/pets/1', 'first', $T1, $T9), (2, 'a', 'f', 2, 201, '/v1/pets/2', 'duplicate', $T2, $T9),
  (2, 'b', 'f', 3, 201, '/v1/pets/3', 'rotated', $T2, $T9), (4, 'a', 'f', 4, 201, '/v1/pets/4', 'other', $T1, $T9)`;
const TIMES: Record<string, string> = {
  $T1: '2026-01-01 00:00:00',
  $T2: '2026-01-02 00:00:00',
  $T3: '2026-01-03 00:00:00',
  $T9: '2026-02-01 00:00:00',
};
const withTimes = (sql: string) => sql.replace(/\$T\d/g, (t) => `'${TIMES[t]}'`);

/** What the lineage migration must leave: who was rotated out (and when), and records keyed by the lineage. */
function expectMigrated(keys: Array<{ id: number; rotatedAt: unknown }>, records: Array<Record<string, unknown>>) {
  const rotated = (id: number) => keys.find((k) => k.id === id)?.rotatedAt;
  expect(String(rotated(1))).toContain('2026-01-02');
  expect(String(rotated(2))).toContain('2026-01-03');
  expect(rotated(3)).toBeNull();
  expect(rotated(4)).toBeNull();
  expect(records.map((r) => [r.lineageId, r.key, r.body])).toEqual([
    [1, 'a', 'first'],
    [1, 'b', 'rotated'],
    [4, 'a', 'other'],
  ]);
}

/** #24 item 6: records scoped to the lineage; rotated-out keys marked, so they can neither rotate nor change. */
describe('the lineage migration', () => {
  it('moves SQLite records to the lineage (the earliest of a duplicate kept) and marks rotated keys', () => {
    const before = migrationsBefore('sqlite');
    const dir = mkdtempSync(join(tmpdir(), 'lineage-sqlite-'));
    const db = new BetterSqlite3(join(dir, 'db.sqlite'));
    try {
      migrateSqlite(db, before.dir);
      db.exec(withTimes(KEYS));
      db.exec(withTimes(RECORDS));
      expect(migrateSqlite(db)).toEqual([expect.stringMatching(/_lineage$/)]);
      const keys = db.prepare('SELECT "id", "rotatedAt" FROM "ApiKey"').all() as Array<{
        id: number;
        rotatedAt: unknown;
      }>;
      const records = db
        .prepare('SELECT "lineageId", "key", "body" FROM "IdempotencyRecord" ORDER BY "lineageId", "key"')
        .all() as Array<Record<string, unknown>>;
      expectMigrated(keys, records);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
      before.remove();
    }
  });

  it('moves PostgreSQL records to the lineage (the earliest of a duplicate kept) and marks rotated keys', async () => {
    const before = migrationsBefore('postgresql');
    const database = await createTestDatabase('postgresql');
    const client = new pg.Client({ connectionString: (database.target as { url: string }).url });
    await client.connect();
    try {
      await migratePostgres(client, before.dir);
      await client.query(withTimes(KEYS));
      await client.query(withTimes(RECORDS));
      expect(await migratePostgres(client)).toEqual([expect.stringMatching(/_lineage$/)]);
      const keys = (
        await client.query<{ id: number; rotatedAt: string | null }>(
          'SELECT "id", "rotatedAt"::text AS "rotatedAt" FROM "ApiKey"',
        )
      ).rows;
      const records = (
        await client.query('SELECT "lineageId", "key", "body" FROM "IdempotencyRecord" ORDER BY "lineageId", "key"')
      ).rows as Array<Record<string, unknown>>;
      expectMigrated(keys, records);
    } finally {
      await client.end();
      await database.drop();
      before.remove();
    }
  });
});
