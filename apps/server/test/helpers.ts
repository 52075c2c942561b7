import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server } from 'node:http';
import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import { PrismaPg } from '@prisma/adapter-pg';
import { ErrorBody, type PlanName } from '@animal-store/contract';
import { createPostgresDatabase } from '@animal-store/test-services';
import { afterAll, beforeAll, expect, inject } from 'vitest';
import { createApp, type AppDeps } from '../src/app.js';
import { createServer, type ServerOptions } from '../src/http/server.js';
import { parseDatabaseUrl, type DatabaseTarget } from '../src/config/database-url.js';
import { DEFAULTS } from '../src/config/defaults.js';
import type { DatabaseLimits } from '../src/config/load.js';
import { openDatabase, type DatabaseConfig } from '../src/db/database.js';
import { PrismaClient as PostgresClient } from '../src/generated/postgresql/client.js';
import { PrismaClient as SqliteClient } from '../src/generated/sqlite/client.js';
import type { Database } from '../src/db/types.js';
import { createApiKey } from '../src/keys/admin.js';
import { LastUsedRecorder } from '../src/keys/last-used.js';
import { createLogger } from '../src/logger.js';

/** `pgbouncer`: the machine's PostgreSQL through PgBouncer in transaction mode (started by the run's global setup). */
export type Provider = 'sqlite' | 'postgresql' | 'pgbouncer';
/** Every HTTP test runs against both providers: a SQLite file and the machine's real PostgreSQL. */
export const PROVIDERS: Provider[] = ['sqlite', 'postgresql'];
/** The main HTTP suites also run through PgBouncer in transaction mode, as behind a managed pooler. */
export const POOLED_PROVIDERS: Provider[] = [...PROVIDERS, 'pgbouncer'];

/** The PostgreSQL server tests create their databases on (trust auth on this machine kind). */
const PG_ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  target: DatabaseTarget;
  drop(): Promise<void>;
}

/** A fresh, empty database: a SQLite file in a temporary folder, or a PostgreSQL database created for this test. */
export async function createTestDatabase(provider: Provider): Promise<TestDatabase> {
  if (provider === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'animal-store-test-'));
    return {
      target: parseDatabaseUrl(`file:${join(dir, 'test.db')}`),
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const database = await createPostgresDatabase(PG_ADMIN_URL, 'animal_store_test');
  const url = new URL(database.url);
  if (provider === 'pgbouncer') {
    // The pooler's address, migrations included (no DATABASE_DIRECT_URL): the server must need no session.
    url.host = `127.0.0.1:${inject('pgbouncerPort')}`;
  }
  return { target: parseDatabaseUrl(url.toString()), drop: () => database.drop() };
}

/**
 * The configuration a test opens a database with: every default (config/defaults.ts, the one source of them), this
 * database, and `changes` (of the limits, only those named).
 */
export function databaseConfig(
  target: DatabaseTarget,
  changes: Partial<Omit<DatabaseConfig, 'database' | 'databaseLimits'>> & {
    databaseLimits?: Partial<DatabaseLimits>;
  } = {},
): DatabaseConfig {
  return {
    ...DEFAULTS,
    ...changes,
    database: target,
    databaseLimits: { ...DEFAULTS.databaseLimits, ...changes.databaseLimits },
  };
}

/**
 * A Prisma client of the provider's generated client on the database, for tests that read and write every model
 * through Prisma's model API (migrations.test.ts). Typed as SQLite's: the two clients have the same model API but
 * types TypeScript cannot unify; the service itself casts neither (db/prisma/key-store.ts).
 */
export function prismaClientFor(target: DatabaseTarget): SqliteClient {
  return target.provider === 'sqlite'
    ? new SqliteClient({ adapter: new PrismaBetterSqlite3({ url: target.file }) })
    : (new PostgresClient({ adapter: new PrismaPg({ connectionString: target.url }) }) as unknown as SqliteClient);
}

export interface TestServer {
  url: string;
  /** The listening node:http server. */
  http: Server;
  db: Database;
  /** Creates a key of the plan and returns the raw key. */
  key(plan?: PlanName, limits?: { perMinute?: number; perDay?: number; concurrentRequests?: number }): Promise<string>;
  /** Writes the keys' noted last uses now (the app writes them every 15 s otherwise). */
  flushLastUsed(): Promise<void>;
  /** Stops the server and closes its database (the database itself stays). */
  close(): Promise<void>;
}

export const silentLogger = createLogger('silent');

/** The real app on a real database, listening on 127.0.0.1 with an ephemeral port, validating its responses. */
export async function startTestServer(
  target: DatabaseTarget,
  deps: Partial<Omit<AppDeps, 'db'>> = {},
  serverOptions: ServerOptions = {},
): Promise<TestServer> {
  const db = await openDatabase(databaseConfig(target));
  const lastUsed =
    deps.lastUsed ?? new LastUsedRecorder(db.apiKeys, { intervalMs: 60_000, ...(deps.now ? { now: deps.now } : {}) });
  const app = createApp({ logger: silentLogger, validateResponses: true, ...deps, lastUsed, db });
  const server: Server = await new Promise((resolve) => {
    // The server main.ts runs: requests and responses created with the app's prototypes.
    const s = createServer(app, serverOptions).listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    http: server,
    db,
    async key(plan = 'free', limits = {}) {
      return (await createApiKey(db.apiKeys, { plan, ...limits })).raw;
    },
    flushLastUsed: () => lastUsed.flush(),
    async close() {
      if (server.listening) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
      await lastUsed.close();
      await db.close();
    },
  };
}

/** Runs `fn` with a fresh database of the provider and the app on it; stops the app and drops the database after. */
export async function withTestServer<T>(
  provider: Provider,
  deps: Partial<Omit<AppDeps, 'db'>>,
  fn: (server: TestServer, database: TestDatabase) => Promise<T>,
): Promise<T> {
  const database = await createTestDatabase(provider);
  try {
    const server = await startTestServer(database.target, deps);
    try {
      return await fn(server, database);
    } finally {
      await server.close();
    }
  } finally {
    await database.drop();
  }
}

/** For a describe block: a fresh database of the provider, opened with every default, closed and dropped after. */
export function useOpenDatabase(provider: Provider): { db: Database } {
  const context = {} as { db: Database; database: TestDatabase };
  beforeAll(async () => {
    context.database = await createTestDatabase(provider);
    context.db = await openDatabase(databaseConfig(context.database.target));
  });
  afterAll(async () => {
    await context.db?.close();
    await context.database?.drop();
  });
  return context;
}

/**
 * For a describe block: a fresh database of the provider and the app on it, started before its tests and stopped
 * (database dropped) after them, with a key of `withKey.plan` made once it runs ('' without `withKey`). Read `server`,
 * `database` and `key` inside tests or hooks.
 */
export function useTestServer(
  provider: Provider,
  deps: Partial<Omit<AppDeps, 'db'>> = {},
  withKey?: { plan: PlanName; limits?: Parameters<TestServer['key']>[1] },
): { server: TestServer; database: TestDatabase; key: string } {
  const context = { key: '' } as { server: TestServer; database: TestDatabase; key: string };
  beforeAll(async () => {
    context.database = await createTestDatabase(provider);
    context.server = await startTestServer(context.database.target, deps);
    if (withKey) context.key = await context.server.key(withKey.plan, withKey.limits);
  });
  afterAll(async () => {
    await context.server?.close();
    await context.database?.drop();
  });
  return context;
}

export function auth(key: string, headers: Record<string, string> = {}): Record<string, string> {
  return { Authorization: `Bearer ${key}`, ...headers };
}

export function jsonPost(key: string, body: unknown): RequestInit {
  return {
    method: 'POST',
    headers: auth(key, { 'Content-Type': 'application/json' }),
    body: typeof body === 'string' ? body : JSON.stringify(body),
  };
}

/**
 * Waits while the current clock minute has fewer than `seconds` left. The per-minute window is the clock minute: a
 * test that counts one window's charges stays inside one window.
 */
export async function awayFromMinuteEnd(seconds = 10): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < seconds * 1000) await new Promise((r) => setTimeout(r, left + 100));
}

/** Polls `check` until it answers true (every 25 ms, at most `timeoutMs`); for effects that land asynchronously. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Asserts an Error body with this status and code (and message part), carrying no internals; returns the body. */
export async function expectError(res: Response, status: number, code: string, messageIncludes?: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = ErrorBody.parse(await res.json());
  expect(body).toMatchObject({ code, status });
  if (messageIncludes) expect(body.message).toContain(messageIncludes);
  expect(body.message).not.toMatch(/prisma|express|zod|ts-rest|sqlite|postgres|\bat .*\.(js|ts):\d+/i);
  return body;
}
