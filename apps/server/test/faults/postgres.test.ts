import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, startMain, type MainProcess } from '../main-process.js';
import { postgresAvailable, startPrivateDatabase, type PrivatePostgres } from './private-postgres.js';
import { expectDependency503, fire, killDuringCreates, metricValue, noStacks } from './expectations.js';

// Ports reserved for #13's private PostgreSQL: 15432-15435.
const PORT = 15432;

describe.skipIf(!postgresAvailable())('PostgreSQL failures (a private cluster, stopped and restarted)', () => {
  let postgres: PrivatePostgres;
  let env: Record<string, string>;
  let key: string;
  let server: MainProcess;

  beforeAll(async () => {
    const started = await startPrivateDatabase(PORT);
    postgres = started.postgres;
    env = {
      ...started.env,
      DATABASE_STATEMENT_TIMEOUT_MS: '3000',
      DATABASE_LOCK_TIMEOUT_MS: '2000',
      KEY_CACHE_TTL_MS: '600000',
    };
    key = createKey(env);
    server = await startMain(env);
  }, 90_000);

  afterAll(async () => {
    await server?.kill();
    await postgres?.destroy();
  });

  it('answers 503 with Retry-After while the database is down, and serves again once it is back', async () => {
    // Warm the key cache: the key was looked up while the database was up.
    expect((await fetch(`${server.url}/v1/pets`, { headers: { Authorization: `Bearer ${key}` } })).status).toBe(200);
    await postgres.stop();
    try {
      const answers = await fire(server.url, key, 30);
      for (const res of answers) await expectDependency503(res);
      // A key not cached yet: its lookup fails; answered after the limiter, so with the rate-limit headers too.
      const unknownKey = `ask_${randomBytes(32).toString('base64url')}`;
      await expectDependency503(
        await fetch(`${server.url}/v1/pets`, { headers: { Authorization: `Bearer ${unknownKey}` } }),
      );
      const ready = await fetch(`${server.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ code: 'service_unavailable', message: 'Database unreachable' });
    } finally {
      await postgres.start();
    }
    // The pool reconnects by itself: answers come back without a restart of the server.
    let created = 0;
    for (let i = 0; i < 100 && created === 0; i++) {
      const res = await fetch(`${server.url}/v1/pets`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'Back', categoryId: 1 }),
      });
      if (res.status === 201) created++;
      else await expectDependency503(res);
    }
    expect(created).toBe(1);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    expect(
      await metricValue(server.url, 'animal_store_dependency_failures_total', 'reason="database_unreachable"'),
    ).toBeGreaterThanOrEqual(31);
    noStacks(server);
  });

  it('answers 503 within the lock timeout while a table lock is held, and /readyz stays ready', async () => {
    const holder = new pg.Client({ connectionString: env.DATABASE_URL });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE "Pet" IN ACCESS EXCLUSIVE MODE');
      // More requests than the pool has connections: none may wait past the bounded timeouts.
      const started = Date.now();
      const pending = fire(server.url, key, 25);
      // While the pool's connections all wait on the lock, readiness has a connection of its own: "busy", not "down".
      await new Promise((resolve) => setTimeout(resolve, 300));
      const ready = await fetch(`${server.url}/readyz`);
      expect(ready.status).toBe(200);
      for (const res of await pending) await expectDependency503(res);
      // Bounded: every answer within the lock and pool timeouts plus slack, not as long as the lock is held.
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
    const res = await fetch(`${server.url}/v1/pets`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'After the lock', categoryId: 1 }),
    });
    expect(res.status).toBe(201);
    expect(
      await metricValue(server.url, 'animal_store_dependency_failures_total', 'reason="database_timeout"'),
    ).toBeGreaterThan(0);
    noStacks(server);
  });

  it('keeps every acknowledged create across a SIGKILL of the server', async () => {
    const result = await killDuringCreates(server, () => startMain(env), key);
    server = result.server;
    expect(result.acknowledged).toBeGreaterThanOrEqual(40);
  });
});
