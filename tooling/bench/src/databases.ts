/**
 * The databases a run measures: a SQLite file or a PostgreSQL database of its own, migrated by the server's key CLI
 * (which also prints the bench's key), seeded with the catalogue, and dropped at the end.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createPostgresDatabase } from '@animal-store/test-services';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { seedStatus } from './page.js';
import { SERVER_DIST } from './paths.js';
import { settings } from './settings.js';

export interface BenchDatabase {
  url: string;
  /** The raw key the key CLI created. */
  key: string;
  drop(): Promise<void>;
}

/**
 * Creates an enterprise key with limits far above what the bench sends, with the key CLI of the build in `serverDist`
 * (which migrates the database as that build expects it); returns the raw key (the last line it prints).
 */
export async function createKey(databaseUrl: string, serverDist = SERVER_DIST): Promise<string> {
  const limits = ['--per-minute', '100000000', '--per-day', '1000000000'];
  // Requests in flight at once far above the connections too; a build from before that limit knows no such flag.
  if (serverDist === SERVER_DIST) limits.push('--concurrent-requests', '100000');
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(serverDist, 'cli/keys.js'), 'create', '--plan', 'enterprise', ...limits, '--name', 'bench'],
    { env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' }, timeout: 60_000 },
  );
  const raw = stdout.trim().split('\n').pop() ?? '';
  if (!raw.startsWith('ask_')) throw new Error(`keys create printed no key:\n${stdout}`);
  return raw;
}

/** A SQLite file in a temporary folder: migrated by the key CLI, then seeded with `pets` pets in one transaction. */
export async function sqliteDatabase(pets: number, serverDist = SERVER_DIST): Promise<BenchDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-bench-'));
  const file = join(dir, 'bench.db');
  const url = `file:${file}`;
  const key = await createKey(url, serverDist);
  const db = new BetterSqlite3(file);
  try {
    const insert = db.prepare('INSERT INTO "Pet" (id, name, categoryId, status) VALUES (?, ?, ?, ?)');
    db.transaction(() => {
      for (let i = 1; i <= pets; i++) insert.run(i, `pet-${i}`, (i % 10) + 1, seedStatus(i, pets));
    })();
    db.exec('ANALYZE');
  } finally {
    db.close();
  }
  return { url, key, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}

/** A fresh PostgreSQL database (dropped by `drop`): migrated by the key CLI, then seeded with one INSERT … SELECT. */
export async function postgresDatabase(pets: number, serverDist = SERVER_DIST): Promise<BenchDatabase> {
  const database = await createPostgresDatabase(settings.pgAdminUrl, 'animal_store_bench');
  const { url } = database;
  const drop = () => database.drop();
  try {
    const key = await createKey(url, serverDist);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const soldFrom = Math.floor(pets * 0.8);
      await c.query(
        `INSERT INTO "Pet" (id, name, "categoryId", status)
         SELECT i, 'pet-' || i, (i % 10) + 1, CASE WHEN i > $2 THEN 'sold' WHEN i % 2 = 1 THEN 'available' ELSE 'pending' END
         FROM generate_series(1, $1::bigint) AS i`,
        [pets, soldFrom],
      );
      await c.query(`SELECT setval(pg_get_serial_sequence('"Pet"', 'id'), $1::bigint)`, [pets]);
      await c.query('ANALYZE');
    } finally {
      await c.end();
    }
    return { url, key, drop };
  } catch (err) {
    await drop();
    throw err;
  }
}
