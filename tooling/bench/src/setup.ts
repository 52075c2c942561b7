/** Databases, keys and server processes for the suite. Everything listens on 127.0.0.1 and is torn down at the end. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { hash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { seedStatus } from './page.js';

const run = promisify(execFile);

export const BENCH_DIST = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = resolve(BENCH_DIST, '../../..');
export const SERVER_DIST = join(REPO_ROOT, 'apps/server/dist');
export const PG_ADMIN_URL = process.env['BENCH_PG_URL'] ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

for (const u of [PG_ADMIN_URL, REDIS_URL]) {
  const host = new URL(u).hostname;
  if (host !== '127.0.0.1' && host !== 'localhost') throw new Error(`the bench targets 127.0.0.1 only, not ${u}`);
}

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}

export interface RunningServer {
  name: string;
  origin: string;
  pid: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

const running = new Set<RunningServer>();

/** Starts `node [nodeArgs] script` with PORT/HOST set and waits until GET /healthz answers 200. */
export async function startServer(
  name: string,
  script: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<RunningServer> {
  const port = await freePort();
  let stderr = '';
  const child = spawn(process.execPath, [...nodeArgs, script], {
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const origin = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const server: RunningServer = {
    name,
    origin,
    pid: child.pid ?? 0,
    child,
    async stop() {
      running.delete(server);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
  running.add(server);
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}) before answering:\n${stderr}`);
    try {
      const res = await fetch(`${origin}/healthz`);
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`${name} did not answer /healthz within 30 s:\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return server;
}

export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((s) => s.stop()));
}

/** Creates an enterprise key with limits far above what the bench sends; returns the raw key (last stdout line). */
export async function createKey(databaseUrl: string): Promise<string> {
  const { stdout } = await run(
    process.execPath,
    [
      join(SERVER_DIST, 'cli/keys.js'),
      'create',
      '--plan',
      'enterprise',
      '--per-minute',
      '100000000',
      '--per-day',
      '1000000000',
      '--name',
      'bench',
    ],
    { env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' }, timeout: 60_000 },
  );
  const raw = stdout.trim().split('\n').pop() ?? '';
  if (!raw.startsWith('ask_')) throw new Error(`keys create printed no key:\n${stdout}`);
  return raw;
}

export interface BenchDatabase {
  url: string;
  key: string;
  drop(): Promise<void>;
}

/** A SQLite file in a temporary folder: migrated by the key CLI, then seeded with `pets` pets in one transaction. */
export async function sqliteDatabase(pets: number): Promise<BenchDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-bench-'));
  const file = join(dir, 'bench.db');
  const url = `file:${file}`;
  const key = await createKey(url);
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
export async function postgresDatabase(pets: number): Promise<BenchDatabase> {
  const name = `animal_store_bench_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  const drop = async () => {
    const c = new pg.Client({ connectionString: PG_ADMIN_URL });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  };
  try {
    const key = await createKey(url.toString());
    const c = new pg.Client({ connectionString: url.toString() });
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
    return { url: url.toString(), key, drop };
  } catch (err) {
    await drop();
    throw err;
  }
}

/** Resident set size of a process (bytes), from /proc. */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1];
  return kb ? Number(kb) * 1024 : NaN;
}

/**
 * `count` more keys like the one the key CLI created (same plan, limits and any other column, copied by the database
 * itself, so columns added later are copied too), each with its own raw key and hash. Keys are made the way the CLI
 * makes them in the legacy format (`ask_` + 43 base64url characters, SHA-256 hex stored; still accepted, and cached
 * after their first lookup as every key is); 40 CLI runs would cost a minute of start-ups.
 */
export async function moreKeys(databaseUrl: string, count: number): Promise<string[]> {
  const raws = Array.from({ length: count }, () => `ask_${randomBytes(32).toString('base64url')}`);
  const rows = raws.map((raw) => ({ raw, hash: hash('sha256', raw, 'hex'), prefix: raw.slice(0, 12) }));
  if (databaseUrl.startsWith('file:')) {
    const db = new BetterSqlite3(databaseUrl.slice('file:'.length), { timeout: 5000 });
    try {
      const columns = (db.prepare('PRAGMA table_info("ApiKey")').all() as Array<{ name: string }>).map((c) => c.name);
      const copied = columns.filter((c) => !['id', 'hash', 'prefix', 'name'].includes(c)).map((c) => `"${c}"`);
      const insert = db.prepare(
        `INSERT INTO "ApiKey" ("hash", "prefix", "name", ${copied.join(', ')}) SELECT ?, ?, ?, ${copied.join(', ')} FROM "ApiKey" ORDER BY "id" LIMIT 1`,
      );
      db.transaction(() => rows.forEach((r, i) => insert.run(r.hash, r.prefix, `bench-${i}`)))();
    } finally {
      db.close();
    }
  } else {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows: cols } = await client.query<{ column_name: string }>(
        `SELECT column_name FROM information_schema.columns WHERE table_name = 'ApiKey' AND table_schema = current_schema()`,
      );
      const copied = cols
        .map((c) => c.column_name)
        .filter((c) => !['id', 'hash', 'prefix', 'name'].includes(c))
        .map((c) => `"${c}"`);
      for (const [i, r] of rows.entries()) {
        await client.query(
          `INSERT INTO "ApiKey" ("hash", "prefix", "name", ${copied.join(', ')}) SELECT $1, $2, $3, ${copied.join(', ')} FROM "ApiKey" ORDER BY "id" LIMIT 1`,
          [r.hash, r.prefix, `bench-${i}`],
        );
      }
    } finally {
      await client.end();
    }
  }
  return raws;
}
