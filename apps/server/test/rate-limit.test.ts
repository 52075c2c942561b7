import { randomBytes } from 'node:crypto';
import { createMemoryStore } from '@animal-store/rate-limit';
import { connect, deletePrefix, startPrivateRedis, type PrivateRedis } from '@animal-store/rate-limit/testing';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load.js';
import { createRateLimitStore } from '../src/rate-limiting/store.js';
import {
  auth,
  awayFromMinuteEnd,
  createTestDatabase,
  eventually,
  jsonPost,
  PROVIDERS,
  silentLogger,
  startTestServer,
  useTestServer,
  withTestServer,
  type TestDatabase,
  type TestServer,
} from './helpers.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const MINUTE = 60_000;

function limitHeaders(res: Response) {
  const get = (name: string) => res.headers.get(name);
  return {
    limit: get('x-ratelimit-limit'),
    remaining: get('x-ratelimit-remaining'),
    reset: get('x-ratelimit-reset'),
    retryAfter: get('retry-after'),
  };
}

async function errorCode(res: Response): Promise<string> {
  return ((await res.json()) as { code: string }).code;
}

describe.each(PROVIDERS)('rate limits over HTTP on %s (memory store, fake clock)', (provider) => {
  // 2026-11-22T20:00:01Z: one second into a minute, four hours before UTC midnight.
  let now = Date.UTC(2026, 10, 22, 20, 0, 1);
  const minuteEnd = () => Math.floor(now / MINUTE) * MINUTE + MINUTE;
  const ctx = useTestServer(provider, {
    rateLimit: { store: createMemoryStore({ now: () => now }), banThreshold: 10, banSeconds: 900 },
  });
  let server: TestServer;
  beforeAll(() => {
    server = ctx.server;
  });

  it('puts X-RateLimit-* on every answer under /v1, whatever its status, and none outside', async () => {
    const key = await server.key('enterprise', { perMinute: 10_000, perDay: 100_000 });
    const u = (p: string) => `${server.url}${p}`;
    const responses = {
      200: await fetch(u('/v1/pets'), { headers: auth(key) }),
      201: await fetch(u('/v1/pets'), jsonPost(key, { name: 'Rex', categoryId: 1 })),
      400: await fetch(u('/v1/pets?limit=0'), { headers: auth(key) }),
      401: await fetch(u('/v1/pets')),
      404: await fetch(u('/v1/pets/424242'), { headers: auth(key) }),
      405: await fetch(u('/v1/pets'), { method: 'PATCH', headers: auth(key) }),
      413: await fetch(u('/v1/pets'), jsonPost(key, { name: 'x'.repeat(70_000), categoryId: 1 })),
      415: await fetch(u('/v1/pets'), {
        method: 'POST',
        headers: auth(key, { 'Content-Type': 'text/plain' }),
        body: 'x',
      }),
      'openapi.json': await fetch(u('/v1/openapi.json')),
      'unknown route': await fetch(u('/v1/nothing'), { headers: auth(key) }),
    };
    for (const [status, res] of Object.entries(responses)) {
      if (/^\d+$/.test(status)) expect(res.status, status).toBe(Number(status));
      const h = limitHeaders(res);
      expect(h.limit, status).toMatch(/^\d+$/);
      expect(h.remaining, status).toMatch(/^\d+$/);
      expect(h.reset, status).toMatch(/^\d{10}$/);
      expect(res.headers.get('ratelimit-policy'), status).toContain('"minute"');
    }
    expect(limitHeaders(responses[200]).limit).toBe('10000');
    expect(limitHeaders(responses[401]).limit).toBe('60'); // anonymous callers get the Free plan, per address
    for (const path of ['/healthz', '/readyz', '/metrics', '/docs']) {
      const res = await fetch(u(path));
      expect(res.headers.get('x-ratelimit-limit'), path).toBeNull();
    }
  });

  it('lets a Free key make exactly 60 requests in a minute, then 429 with Retry-After until the minute ends', async () => {
    now = Date.UTC(2026, 10, 22, 20, 1, 1);
    const key = await server.key('free');
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 65; i++) {
      last = await fetch(`${server.url}/v1/pets?limit=1`, { headers: auth(key) });
      statuses.push(last.status);
      if (i === 0)
        expect(limitHeaders(last)).toMatchObject({ limit: '60', remaining: '59', reset: String(minuteEnd() / 1000) });
      if (i < 64) await last.arrayBuffer();
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(60);
    expect(statuses.slice(60)).toEqual([429, 429, 429, 429, 429]);
    expect(limitHeaders(last!)).toEqual({
      limit: '60',
      remaining: '0',
      reset: String(minuteEnd() / 1000),
      retryAfter: '59',
    });
    expect(await last!.json()).toMatchObject({ code: 'rate_limit_exceeded', status: 429 });
    now = minuteEnd(); // the reset instant
    const again = await fetch(`${server.url}/v1/pets?limit=1`, { headers: auth(key) });
    expect(again.status).toBe(200);
    expect(limitHeaders(again).remaining).toBe('59');
  });

  it('refuses past the day limit with a Retry-After pointing at UTC midnight', async () => {
    now = Date.UTC(2026, 10, 22, 20, 0, 30);
    const key = await server.key('enterprise', { perMinute: 5, perDay: 5 });
    for (let i = 0; i < 5; i++) expect((await fetch(`${server.url}/v1/pets`, { headers: auth(key) })).status).toBe(200);
    const refused = await fetch(`${server.url}/v1/pets`, { headers: auth(key) });
    expect(refused.status).toBe(429);
    const midnight = Date.UTC(2026, 10, 23);
    expect(limitHeaders(refused)).toEqual({
      limit: '5',
      remaining: '0',
      reset: String(midnight / 1000),
      retryAfter: String((midnight - now) / 1000),
    });
    expect(await errorCode(refused)).toBe('rate_limit_exceeded');
    now = midnight;
    expect((await fetch(`${server.url}/v1/pets`, { headers: auth(key) })).status).toBe(200);
  });

  it('bans a key that keeps calling while refused, for the ban time, then lets it back', async () => {
    now = Date.UTC(2026, 10, 22, 21, 0, 0);
    const key = await server.key('free');
    for (let i = 0; i < 60; i++)
      await (await fetch(`${server.url}/v1/pets?limit=1`, { headers: auth(key) })).arrayBuffer();
    const codes: string[] = [];
    for (let i = 0; i < 11; i++)
      codes.push(await errorCode(await fetch(`${server.url}/v1/pets`, { headers: auth(key) })));
    expect(codes).toEqual([...Array(10).fill('rate_limit_exceeded'), 'api_key_banned']);
    now += 2 * MINUTE; // a fresh minute: the window has room, the ban holds
    const banned = await fetch(`${server.url}/v1/pets`, { headers: auth(key) });
    expect(banned.status).toBe(429);
    expect(await errorCode(banned)).toBe('api_key_banned');
    expect(limitHeaders(banned).retryAfter).toBe(String(900 - 120));
    expect(limitHeaders(banned).remaining).toBe('0');
    now = Date.UTC(2026, 10, 22, 21, 15, 0);
    expect((await fetch(`${server.url}/v1/pets`, { headers: auth(key) })).status).toBe(200);

    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/animal_store_rate_limit_bans_total\{plan="free"\} 1\n/);
    expect(
      Number(
        /animal_store_rate_limit_refusals_total\{reason="rate_limit_exceeded",plan="free"\} (\d+)/.exec(metrics)?.[1],
      ),
    ).toBeGreaterThanOrEqual(10);
    expect(
      Number(/animal_store_rate_limit_refusals_total\{reason="api_key_banned",plan="free"\} (\d+)/.exec(metrics)?.[1]),
    ).toBeGreaterThanOrEqual(2);
  });

  it('limits keyless callers per address with the Free limits: key guessing is slowed', async () => {
    now = Date.UTC(2026, 10, 22, 22, 0, 0);
    const statuses: number[] = [];
    for (let i = 0; i < 62; i++) {
      const res = await fetch(`${server.url}/v1/pets`, {
        headers: { Authorization: `Bearer ask_${randomBytes(32).toString('base64url')}` },
      });
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    expect(statuses.filter((s) => s === 401)).toHaveLength(60);
    expect(statuses.slice(60)).toEqual([429, 429]);
  });
});

describe('the client address of keyless callers', () => {
  it.each([
    [false, 'ignores X-Forwarded-For: one bucket for the socket address'],
    [true, 'takes the X-Forwarded-For entry the one trusted proxy added (the last) when TRUST_PROXY is set'],
  ])('trustProxy=%s %s', async (trustProxy) => {
    const now = Date.UTC(2026, 10, 22, 23, 0, 0);
    await withTestServer(
      'sqlite',
      { trustProxy, rateLimit: { store: createMemoryStore({ now: () => now }) } },
      async (server) => {
        const remaining = async (forwardedFor: string) =>
          (await fetch(`${server.url}/v1/pets`, { headers: { 'X-Forwarded-For': forwardedFor } })).headers.get(
            'x-ratelimit-remaining',
          );
        expect(await remaining('203.0.113.7')).toBe('59');
        expect(await remaining('198.51.100.9, 10.0.0.1')).toBe(trustProxy ? '59' : '58');
        expect(await remaining('203.0.113.7')).toBe(trustProxy ? '58' : '57');
        // A client's own leftmost entry picks no identity: the address the proxy appended does.
        expect(await remaining('6.6.6.6, 203.0.113.7')).toBe(trustProxy ? '57' : '56');
      },
    );
  });
});

describe('two replicas on one PostgreSQL and one Redis', () => {
  let database: TestDatabase;
  let redis: Redis;
  const prefix = `animal-store-test:${randomBytes(6).toString('hex')}:`;
  const servers: TestServer[] = [];
  const stores: { close(): Promise<void> }[] = [];

  async function replica(): Promise<TestServer> {
    const config = loadConfig({ REDIS_URL });
    // What is shared is tested here, not Redis timeouts (the outage tests do that): on a busy machine a 100 ms command
    // timeout fell back to per-replica memory and let more than 60 through (as scale-out.test.ts does, 2 s).
    const limits = createRateLimitStore(config, silentLogger, { prefix, timeoutMs: 2_000 });
    stores.push(limits);
    // The rate limiter's exactness is the subject: no concurrency limit (its tests are in concurrency.test.ts).
    const server = await startTestServer(database.target, { rateLimit: { store: limits }, concurrency: false });
    servers.push(server);
    return server;
  }

  beforeAll(async () => {
    redis = await connect({ url: REDIS_URL });
    database = await createTestDatabase('postgresql');
  });
  afterAll(async () => {
    for (const s of servers) await s.close();
    for (const s of stores) await s.close();
    await deletePrefix(redis, prefix);
    redis.disconnect();
    await database.drop();
  });

  it('behave as one service: data, limits (80 concurrent -> exactly 60 pass) and bans are shared', async () => {
    const [a, b] = [await replica(), await replica()];
    const key = await a.key('free');

    const created = await fetch(`${a.url}/v1/pets`, jsonPost(key, { name: 'Shared', categoryId: 3000000000 }));
    const pet = (await created.json()) as { id: number };
    const read = await fetch(`${b.url}/v1/pets/${pet.id}`, { headers: auth(key) });
    expect(await read.json()).toEqual({ id: pet.id, name: 'Shared', categoryId: 3000000000 });

    const other = await a.key('free');
    await awayFromMinuteEnd();
    const burst = await Promise.all(
      Array.from({ length: 80 }, (_, i) =>
        fetch(`${(i % 2 ? a : b).url}/v1/pets?limit=1`, { headers: auth(other) }).then(
          async (r) => (await r.arrayBuffer(), r.status),
        ),
      ),
    );
    expect(burst.filter((s) => s === 200)).toHaveLength(60);
    expect(burst.filter((s) => s === 429)).toHaveLength(20);

    // 20 refusals so far: past the threshold of 10, so the ban started during the burst; both replicas see it.
    for (const server of [a, b]) {
      const res = await fetch(`${server.url}/v1/pets`, { headers: auth(other) });
      expect(res.status).toBe(429);
      expect(await errorCode(res)).toBe('api_key_banned');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(800);
    }
  });

  it('keeps the counters in Redis across a restart of the server', async () => {
    const first = await replica();
    const key = await first.key('enterprise', { perMinute: 20, perDay: 20 });
    for (let i = 0; i < 5; i++) await (await fetch(`${first.url}/v1/pets`, { headers: auth(key) })).arrayBuffer();
    await first.close();
    servers.splice(servers.indexOf(first), 1);
    const second = await replica();
    const res = await fetch(`${second.url}/v1/pets`, { headers: auth(key) });
    expect(res.status).toBe(200);
    expect(limitHeaders(res)).toMatchObject({ limit: '20', remaining: '14' });
  });
});

describe.each(PROVIDERS)('a Redis outage, on %s', (provider) => {
  let redis: PrivateRedis | undefined;
  let database: TestDatabase;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    database = await createTestDatabase(provider);
  });
  afterAll(async () => {
    await redis?.stop();
    await database.drop();
  });

  it.each([
    ['fallback', 200],
    ['refuse', 503],
  ] as const)(
    'in %s mode: requests are still answered (%d) when Redis stops mid-test',
    async (mode, statusWhileDown) => {
      await redis!.start();
      const config = loadConfig({ REDIS_URL: redis!.url, RATE_LIMIT_REDIS_FAILURE: mode });
      const limits = createRateLimitStore(config, silentLogger, { prefix: `outage-${provider}-${mode}:` });
      const server = await startTestServer(database.target, { rateLimit: { store: limits } });
      try {
        const key = await server.key('pro');
        // Until its Redis client has connected, the refuse mode answers 503: wait for the first 200.
        let before: Response | undefined;
        await eventually(
          async () => (before = await fetch(`${server.url}/v1/pets`, { headers: auth(key) })).status === 200,
        );
        expect(before!.status).toBe(200);
        expect(before!.headers.get('x-ratelimit-limit')).toBe('300');

        await redis!.stop();
        for (let i = 0; i < 5; i++) {
          const started = Date.now();
          const res = await fetch(`${server.url}/v1/pets`, { headers: auth(key) });
          expect(Date.now() - started).toBeLessThan(2000); // answered, not hanging on Redis
          expect(res.status).toBe(statusWhileDown);
          if (statusWhileDown === 200) expect(res.headers.get('x-ratelimit-limit')).toBe('300');
          else expect(await errorCode(res)).toBe('service_unavailable');
        }
      } finally {
        await server.close();
        await limits.close();
      }
    },
  );
});
