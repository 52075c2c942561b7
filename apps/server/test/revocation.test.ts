import { performance } from 'node:perf_hooks';
import { CreatedApiKey } from '@animal-store/contract';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_CHANGES_CHANNEL } from '../src/db/postgres/key-changes.js';
import { auth, createTestDatabase, startTestServer, type TestDatabase, type TestServer } from './helpers.js';

const ADMIN_TOKEN = 'admin-token-for-tests-0123456789abcdef';

/**
 * Two replicas on one PostgreSQL database, each caching key lookups for a minute: a change made through one replica's
 * admin API must stop the key on the other within a second (LISTEN/NOTIFY empties its cache; the TTL is only the net).
 */
describe('key changes reach every replica within a second (PostgreSQL)', () => {
  let database: TestDatabase;
  let a: TestServer;
  let b: TestServer;
  const measured: Record<string, number> = {};

  beforeAll(async () => {
    database = await createTestDatabase('postgresql');
    a = await startTestServer(database.target, { keyCacheTtlMs: 60_000, adminToken: ADMIN_TOKEN });
    b = await startTestServer(database.target, { keyCacheTtlMs: 60_000, adminToken: ADMIN_TOKEN });
    await Promise.all([a.db.keyChanges.ready(), b.db.keyChanges.ready()]);
  });
  afterAll(async () => {
    process.stdout.write(`key change -> refused on the other replica (ms): ${JSON.stringify(measured)}\n`);
    await a?.close();
    await b?.close();
    await database?.drop();
  });

  const admin = (server: TestServer, method: string, path: string, body?: unknown) =>
    fetch(`${server.url}/admin/v1${path}`, {
      method,
      headers: { ...auth(ADMIN_TOKEN), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const listOn = (server: TestServer, key: string) => fetch(`${server.url}/v1/pets`, { headers: auth(key) });

  /** Milliseconds from `change` answered on A until B answers `status` for the key (polling every 10 ms, at most 5 s). */
  async function timeUntilRefused(key: string, status: number, change: () => Promise<Response>): Promise<number> {
    const res = await change();
    expect(res.status).toBeLessThan(300);
    const start = performance.now();
    while ((await listOn(b, key)).status !== status) {
      if (performance.now() - start > 5000) throw new Error('the other replica still accepts the key after 5 s');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return performance.now() - start;
  }

  async function warmKey(body: Record<string, unknown> = { plan: 'pro' }) {
    const created = CreatedApiKey.parse(await (await admin(a, 'POST', '/keys', body)).json());
    // Both replicas have the key cached as active.
    expect((await listOn(a, created.secret)).status).toBe(200);
    expect((await listOn(b, created.secret)).status).toBe(200);
    return created;
  }

  it('a revocation', async () => {
    const { key, secret } = await warmKey();
    measured.revoke = await timeUntilRefused(secret, 401, () => admin(a, 'POST', `/keys/${key.id}/revoke`));
    expect(measured.revoke).toBeLessThan(1000);
  });

  it('a rotation with no overlap (the old key expires now)', async () => {
    const { key, secret } = await warmKey();
    measured.rotate = await timeUntilRefused(secret, 401, () =>
      admin(a, 'POST', `/keys/${key.id}/rotate`, { overlapSeconds: 0 }),
    );
    expect(measured.rotate).toBeLessThan(1000);
  });

  it('a change of scopes', async () => {
    const { key, secret } = await warmKey();
    measured.rescope = await timeUntilRefused(secret, 403, () =>
      admin(a, 'PATCH', `/keys/${key.id}`, { scopes: ['pets:write'] }),
    );
    expect(measured.rescope).toBeLessThan(1000);
  });

  it('after the listening connection was cut, the replica listens again and forgets what it may have missed', async () => {
    const { key, secret } = await warmKey();
    const sql = new pg.Client({ connectionString: database.target.url });
    await sql.connect();
    try {
      // A change made while B does not listen (straight in the database, as another tool would, with no NOTIFY):
      // committed right after both replicas' LISTEN sessions are terminated (this test's own database only), before
      // their first reconnection attempt (100 ms later).
      await sql.query('BEGIN');
      await sql.query('UPDATE "ApiKey" SET "revokedAt" = now() WHERE id = $1', [key.id]);
      const { rowCount } = await sql.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query = $1`,
        [`LISTEN ${KEY_CHANGES_CHANNEL}`],
      );
      await sql.query('COMMIT');
      expect(rowCount).toBe(2);
    } finally {
      await sql.end();
    }
    // ... is not missed: B empties its cache when it listens again.
    const start = performance.now();
    while ((await listOn(b, secret)).status !== 401) {
      if (performance.now() - start > 10_000) throw new Error('the replica did not listen again within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    measured.relisten = performance.now() - start;
    // And it hears the next change again.
    const next = await warmKey();
    measured.afterRelisten = await timeUntilRefused(next.secret, 401, () =>
      admin(a, 'POST', `/keys/${next.key.id}/revoke`),
    );
    expect(measured.afterRelisten).toBeLessThan(1000);
  });
});
