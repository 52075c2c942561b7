// Two replicas of the server, as production runs them past one machine: PostgreSQL through PgBouncer in transaction
// mode (the run's global setup starts it on 6432) and rate limits on a Redis Cluster (7001-7006).
import { randomBytes } from 'node:crypto';
import { createRedisClusterClient, parseClusterNodes } from '@animal-store/rate-limit';
import { deleteClusterPrefix } from '@animal-store/rate-limit/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { DatabaseTarget } from '../src/config/database-url.js';
import { loadConfig } from '../src/config/load.js';
import { createRateLimitStore } from '../src/rate-limiting/store.js';
import {
  auth,
  awayFromMinuteEnd,
  createTestDatabase,
  eventually,
  jsonPost,
  silentLogger,
  startTestServer,
  type TestDatabase,
  type TestServer,
} from './helpers.js';

/** The pooled URL of a test database (through PgBouncer, with Prisma's `pgbouncer=true`), migrations over the direct one. */
function pooled(database: TestDatabase): DatabaseTarget {
  const direct = new URL(database.target.url);
  return loadConfig({
    DATABASE_URL: `postgresql://postgres@127.0.0.1:${inject('pgbouncerPort')}${direct.pathname}?pgbouncer=true`,
    DATABASE_DIRECT_URL: direct.toString(),
  }).database;
}

describe('two replicas behind PgBouncer (transaction mode) sharing a Redis Cluster', () => {
  const prefix = `animal-store-test:${randomBytes(6).toString('hex')}:`;
  // refuse: a decision Redis did not make is a 503, never a per-replica one from memory, so the counts below are the
  // cluster's (2 s timeouts: the machine is shared).
  const config = loadConfig({ REDIS_CLUSTER_NODES: inject('redisClusterNodes'), RATE_LIMIT_REDIS_FAILURE: 'refuse' });
  const stores = [0, 1].map(() => createRateLimitStore(config, silentLogger, { prefix, timeoutMs: 2_000 }));
  let database: TestDatabase;
  let replicas: TestServer[] = [];

  beforeAll(async () => {
    database = await createTestDatabase('postgresql');
    const target = pooled(database);
    // Both start at once: their migrations serialise on the advisory lock.
    replicas = await Promise.all(
      // The rate limiter's exactness is the subject: no concurrency limit (its tests are in concurrency.test.ts).
      stores.map((store) =>
        startTestServer(target, { rateLimit: { store, banThreshold: 10, banSeconds: 900 }, concurrency: false }),
      ),
    );
    // Each replica's cluster client is connected once it answers something else than 503.
    const key = await replicas[0]!.key('enterprise', { perMinute: 100_000, perDay: 1_000_000 });
    for (const replica of replicas)
      await eventually(
        async () => (await fetch(`${replica.url}/v1/pets`, { headers: auth(key) })).status === 200,
        20_000,
      );
  });
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.close()));
    const cluster = createRedisClusterClient({
      nodes: parseClusterNodes(inject('redisClusterNodes')),
      commandTimeout: 2_000,
    });
    await new Promise((resolve) => cluster.once('ready', resolve));
    await deleteClusterPrefix(cluster, prefix);
    cluster.disconnect();
    await Promise.all(stores.map((s) => s.close()));
    await database?.drop();
  });

  it('gives a Free key exactly 60 of 80 concurrent requests across both replicas', async () => {
    const key = await replicas[0]!.key('free');
    // A burst that crossed into the next minute would get two windows.
    await awayFromMinuteEnd(5);
    const statuses = await Promise.all(
      Array.from({ length: 80 }, (_, i) =>
        fetch(`${replicas[i % 2]!.url}/v1/pets`, { headers: auth(key) }).then((res) => res.status),
      ),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(60);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
  });

  it('reads on one replica the pet made on the other', async () => {
    const key = await replicas[1]!.key('pro');
    const created = await fetch(
      `${replicas[0]!.url}/v1/pets`,
      jsonPost(key, { name: 'Across', categoryId: 7, status: 'pending' }),
    );
    expect(created.status).toBe(201);
    const pet = (await created.json()) as { id: number };
    const got = await fetch(`${replicas[1]!.url}/v1/pets/${pet.id}`, { headers: auth(key) });
    expect(got.status).toBe(200);
    expect(await got.json()).toEqual({ id: pet.id, name: 'Across', categoryId: 7, status: 'pending' });
    const listed = await fetch(`${replicas[1]!.url}/v1/pets?status=pending&limit=100`, { headers: auth(key) });
    expect(((await listed.json()) as Array<{ id: number }>).map((p) => p.id)).toContain(pet.id);
  });

  it('answers a burst of mixed reads and writes on both replicas without a 5xx', async () => {
    const key = await replicas[0]!.key('enterprise', { perMinute: 100_000, perDay: 1_000_000 });
    const paths = [
      '/v1/pets',
      '/v1/pets?status=available',
      '/v1/pets?limit=5',
      '/v1/pets?status=sold&limit=3',
      '/v1/pets/1',
    ];
    const statuses = await Promise.all(
      Array.from({ length: 400 }, (_, i) => {
        const base = replicas[i % 2]!.url;
        const request =
          i % 10 === 0
            ? fetch(
                `${base}/v1/pets`,
                jsonPost(key, { name: `Load ${i}`, categoryId: i + 1, status: i % 20 === 0 ? 'sold' : 'available' }),
              )
            : fetch(`${base}${paths[i % paths.length]}`, { headers: auth(key) });
        return request.then((res) => res.status);
      }),
    );
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(statuses.filter((s) => s === 201)).toHaveLength(40);
  });
});
