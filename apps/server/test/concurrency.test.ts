// Requests in flight per key lineage (issue #25 §1), over HTTP: the 429, and a slot given back however a request ends.
import { randomBytes } from 'node:crypto';
import { connect as tcp, type Socket } from 'node:net';
import { PLAN_LIMITS } from '@animal-store/contract';
import type { ConcurrencyLimiter } from '@animal-store/rate-limit';
import { deletePrefix } from '@animal-store/rate-limit/testing';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load.js';
import { rateLimitKeyOf } from '../src/keys/identity.js';
import { hashKey } from '../src/keys/resolver.js';
import { createKeyConcurrencyLimiter } from '../src/rate-limiting/concurrency.js';
import { sharedRedisClient } from '../src/rate-limiting/store.js';
import {
  auth,
  createTestDatabase,
  eventually,
  expectError,
  jsonPost,
  PROVIDERS,
  silentLogger,
  startTestServer,
  useTestServer,
  type TestServer,
} from './helpers.js';

/** The slot count of a key's lineage now (an acquire with limit 0 takes nothing). */
async function inFlight(limiter: ConcurrencyLimiter, server: TestServer, rawKey: string): Promise<number> {
  const record = await server.db.apiKeys.findByHash(hashKey(rawKey));
  return (await limiter.acquire(rateLimitKeyOf(record!), 0)).inFlight;
}

const memoryLimiter = () =>
  createKeyConcurrencyLimiter({ concurrency: { scope: 'replica', leaseMs: 60_000 } }, silentLogger, undefined)!;

/**
 * A create whose body is still on its way: it holds a slot (taken before the body is read) until `finish` sends the
 * rest, `hangUp` drops the connection, or the server gives up on it.
 */
function slowCreate(url: string, key: string) {
  const { port } = new URL(url);
  const body = JSON.stringify({ name: 'Slow', categoryId: 1 });
  const socket: Socket = tcp(Number(port), '127.0.0.1');
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(
    `POST /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`,
  );
  return {
    async finish(): Promise<number> {
      socket.write(body.slice(5));
      await closed;
      return Number(/^HTTP\/1\.1 (\d+)/.exec(received)?.[1]);
    },
    hangUp: () => socket.destroy(),
    /** The status the server answered, once the connection closed (408 when it gave up). */
    async answered(): Promise<number | undefined> {
      await closed;
      const match = /^HTTP\/1\.1 (\d+)/.exec(received);
      return match ? Number(match[1]) : undefined;
    },
  };
}

describe.each(PROVIDERS)('requests in flight per key on %s (memory)', (provider) => {
  const limiter = memoryLimiter();
  const ctx = useTestServer(provider, { concurrency: limiter });

  it('refuses the request past the plan’s number with 429, Retry-After: 1 and the rate-limit headers', async () => {
    const { server } = ctx;
    const key = await server.key('free');
    const held = Array.from({ length: PLAN_LIMITS.free.concurrentRequests }, () => slowCreate(server.url, key));
    await eventually(async () => (await inFlight(limiter, server, key)) === 5);

    const refused = await fetch(`${server.url}/v1/pets`, { headers: auth(key) });
    await expectError(refused, 429, 'concurrency_limit_exceeded', '5 at once');
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('x-ratelimit-limit')).toBe('60');
    expect(refused.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
    // Another key, and the keyless 401, are not counted against it.
    expect((await fetch(`${server.url}/v1/pets`, { headers: auth(await server.key('free')) })).status).toBe(200);
    expect((await fetch(`${server.url}/v1/pets`)).status).toBe(401);

    expect(await held[0]!.finish()).toBe(201);
    await eventually(async () => (await inFlight(limiter, server, key)) === 4);
    expect((await fetch(`${server.url}/v1/pets`, { headers: auth(key) })).status).toBe(200);
    for (const h of held.slice(1)) h.hangUp();
    await eventually(async () => (await inFlight(limiter, server, key)) === 0);
  });

  it('gives the slot back after every error answer', async () => {
    const { server } = ctx;
    const key = await server.key('free');
    const answers = [
      await fetch(`${server.url}/v1/pets?limit=0`, { headers: auth(key) }),
      await fetch(`${server.url}/v1/pets/424242`, { headers: auth(key) }),
      await fetch(`${server.url}/v1/pets`, jsonPost(key, '{"name":')),
      await fetch(`${server.url}/v1/pets`, {
        ...jsonPost(key, {}),
        headers: auth(key, { 'Content-Type': 'text/plain' }),
      }),
      await fetch(`${server.url}/v1/nowhere`, { headers: auth(key) }),
      await fetch(`${server.url}/v1/pets`, { method: 'DELETE', headers: auth(key) }),
    ];
    expect(answers.map((a) => a.status)).toEqual([400, 404, 400, 415, 404, 405]);
    await eventually(async () => (await inFlight(limiter, server, key)) === 0);
  });

  it('gives the slot back when the client disconnects mid-request', async () => {
    const { server } = ctx;
    const key = await server.key('free');
    const held = Array.from({ length: 5 }, () => slowCreate(server.url, key));
    await eventually(async () => (await inFlight(limiter, server, key)) === 5);
    for (const h of held) h.hangUp();
    await eventually(async () => (await inFlight(limiter, server, key)) === 0);
    expect((await fetch(`${server.url}/v1/pets`, { headers: auth(key) })).status).toBe(200);
  });

  it('takes an enterprise key’s own number', async () => {
    const { server } = ctx;
    const key = await server.key('enterprise', { perMinute: 1000, perDay: 10_000, concurrentRequests: 2 });
    const held = [slowCreate(server.url, key), slowCreate(server.url, key)];
    await eventually(async () => (await inFlight(limiter, server, key)) === 2);
    await expectError(await fetch(`${server.url}/v1/pets`, { headers: auth(key) }), 429, 'concurrency_limit_exceeded');
    for (const h of held) h.hangUp();
    await eventually(async () => (await inFlight(limiter, server, key)) === 0);
  });
});

describe('a request the server gives up on (timeout)', () => {
  it('gives its slot back when the request timeout answers 408 and closes the connection', async () => {
    const limiter = memoryLimiter();
    const database = await createTestDatabase('sqlite');
    const server = await startTestServer(
      database.target,
      { concurrency: limiter },
      { limits: { headersTimeoutMs: 1000, requestTimeoutMs: 1000, keepAliveTimeoutMs: 5000, maxConnections: 100 } },
    );
    try {
      const key = await server.key('free');
      const slow = slowCreate(server.url, key);
      await eventually(async () => (await inFlight(limiter, server, key)) === 1);
      expect(await slow.answered()).toBe(408);
      await eventually(async () => (await inFlight(limiter, server, key)) === 0);
    } finally {
      await server.close();
      await database.drop();
    }
  });
});

describe('shared through Redis by two replicas on one PostgreSQL', () => {
  const prefix = `animal-store-test:cc:${randomBytes(6).toString('hex')}:`;
  const config = loadConfig({ REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' });
  const clients = [sharedRedisClient(config, { timeoutMs: 2_000 })!, sharedRedisClient(config, { timeoutMs: 2_000 })!];
  const limiters = clients.map((client) =>
    createKeyConcurrencyLimiter({ concurrency: { scope: 'shared', leaseMs: 60_000 } }, silentLogger, client, {
      prefix,
    })!,
  );
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let replicas: TestServer[];
  beforeAll(async () => {
    database = await createTestDatabase('postgresql');
    replicas = [];
    for (const limiter of limiters) replicas.push(await startTestServer(database.target, { concurrency: limiter }));
  });
  afterAll(async () => {
    for (const replica of replicas) await replica.close();
    await database.drop();
    await deletePrefix(clients[0] as Redis, prefix);
    for (const client of clients) client.disconnect();
  });

  it('counts a key’s requests in flight on both replicas together, exactly', async () => {
    const [a, b] = replicas as [TestServer, TestServer];
    const key = await a.key('free');
    const held = [
      ...Array.from({ length: 3 }, () => slowCreate(a.url, key)),
      ...Array.from({ length: 2 }, () => slowCreate(b.url, key)),
    ];
    await eventually(async () => (await inFlight(limiters[0]!, a, key)) === 5);
    await expectError(await fetch(`${a.url}/v1/pets`, { headers: auth(key) }), 429, 'concurrency_limit_exceeded');
    await expectError(await fetch(`${b.url}/v1/pets`, { headers: auth(key) }), 429, 'concurrency_limit_exceeded');
    held[0]!.hangUp(); // a slot on replica a, given back in Redis
    await eventually(async () => (await inFlight(limiters[1]!, b, key)) === 4);
    expect((await fetch(`${b.url}/v1/pets`, { headers: auth(key) })).status).toBe(200);
    for (const h of held) h.hangUp();
    await eventually(async () => (await inFlight(limiters[1]!, b, key)) === 0);
  });
});
