// Outage behaviour against a private redis-server that the test starts, kills and restarts.
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { TEST_BAN } from './test-utils/ban.js';
import { RateLimitStoreUnavailableError } from './errors.js';
import { createLimiter, type RateLimiter } from './limiter.js';
import { createMemoryStore } from './memory-store.js';
import { MINUTE_MS, DAY_MS } from './windows.js';
import { createRedisClient, createRedisStore } from './redis-store.js';
import { createResilientStore } from './resilient-store.js';
import { startPrivateRedis, testPrefix, waitReady, type PrivateRedis } from './test-utils/redis.js';
import type { RateLimitStore, WindowLimit } from './types.js';

/** The lifecycle methods of a store that holds nothing. */
const inert = { refund: () => Promise.resolve(), resetKey: () => Promise.resolve(), close: () => Promise.resolve() };

const W: WindowLimit[] = [
  { name: 'minute', limit: 5, windowMs: MINUTE_MS },
  { name: 'day', limit: 1000, windowMs: DAY_MS },
];
const prefix = testPrefix();
let redis: PrivateRedis | undefined;
const clients: Redis[] = [];

beforeAll(async () => {
  redis = await startPrivateRedis();
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.disconnect();
  // A test that failed after stopping Redis must not take the next ones down with it.
  await redis?.start();
});
afterAll(async () => {
  await redis?.stop();
});

async function newClient(): Promise<Redis> {
  const client = createRedisClient({ url: redis!.url, maxReconnectDelayMs: 200 });
  clients.push(client);
  await waitReady(client);
  return client;
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - start };
}

/** Consumes until the decision comes from Redis again (bounded). */
async function untilRedis(limiter: RateLimiter, key: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const d = await limiter.consume(key, W);
    if (d.source === 'redis') return;
    if (Date.now() > deadline) throw new Error('did not return to Redis');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('resilient store over a real Redis outage', () => {
  it('fallback mode: answers from memory while Redis is down, warns once, returns to Redis by itself', async () => {
    const client = await newClient();
    const onFallback = vi.fn();
    const onRecover = vi.fn();
    const redisStore = createRedisStore({ client, prefix });
    const limiter = createLimiter({
      store: createResilientStore({
        primary: redisStore,
        mode: 'fallback',
        // A frozen clock for the fallback's windows: a real minute boundary during the loop would reset its counter.
        fallback: createMemoryStore({ now: () => Date.UTC(2026, 0, 1, 0, 0, 30) }),
        onFallback,
        onRecover,
        retryIntervalMs: 100,
      }),
      ban: TEST_BAN,
    });

    const healthy = await limiter.consume('outage', W);
    expect(healthy.source).toBe('redis');
    expect(healthy.fallbackError).toBeUndefined();

    await redis!.stop();
    const results = [];
    for (let i = 0; i < 12; i++) {
      const { value, ms } = await timed(() => limiter.consume('outage', W));
      expect(ms).toBeLessThan(1_000);
      results.push(value);
      if (i % 3 === 0) await new Promise((r) => setTimeout(r, 120)); // let probes of Redis happen
    }
    expect(results.every((d) => d.source === 'memory' && d.fallbackError !== undefined)).toBe(true);
    // the fallback really limits: a fresh per-process counter, 5/minute
    expect(results.map((d) => d.allowed)).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(onFallback).toHaveBeenCalledTimes(1);
    expect(onRecover).not.toHaveBeenCalled();

    await redis!.start();
    await untilRedis(limiter, 'after-restart');
    expect(onRecover).toHaveBeenCalledTimes(1);
    const back = await limiter.consume('after-restart', W);
    expect(back.source).toBe('redis');
    // the new (empty) Redis holds the counter, proving the decision came from it
    const [minuteKey] = redisStore.keysFor('after-restart', [MINUTE_MS]);
    expect(await client.hget(minuteKey!, 'c')).toBe(String(back.windows[0]!.used));
    expect(onFallback).toHaveBeenCalledTimes(1);
  });

  it('refuse mode: throws a 503 RateLimitStoreUnavailableError quickly, then recovers', async () => {
    const client = await newClient();
    const limiter = createLimiter({
      store: createResilientStore({
        primary: createRedisStore({ client, prefix }),
        mode: 'refuse',
        retryIntervalMs: 100,
      }),
      ban: TEST_BAN,
    });
    expect((await limiter.consume('refuse', W)).source).toBe('redis');

    await redis!.stop();
    for (let i = 0; i < 5; i++) {
      const start = performance.now();
      const err = await limiter.consume('refuse', W).then(
        () => null,
        (e: unknown) => e,
      );
      expect(performance.now() - start).toBeLessThan(1_000);
      expect(err).toBeInstanceOf(RateLimitStoreUnavailableError);
      expect((err as RateLimitStoreUnavailableError).status).toBe(503);
      expect((err as RateLimitStoreUnavailableError).code).toBe('service_unavailable');
      await new Promise((r) => setTimeout(r, 60));
    }

    await redis!.start();
    const deadline = Date.now() + 15_000;
    for (;;) {
      const ok = await limiter.consume('refuse', W).then(
        (d) => d,
        () => null,
      );
      if (ok !== null) {
        expect(ok.source).toBe('redis');
        expect(ok.windows[0]!.used).toBe(1); // the restarted Redis is empty
        break;
      }
      if (Date.now() > deadline) throw new Error('did not recover');
      await new Promise((r) => setTimeout(r, 50));
    }
  });

  it('recovers from NOSCRIPT (script cache flushed) transparently', async () => {
    const client = await newClient();
    const limiter = createLimiter({ store: createRedisStore({ client, prefix }), ban: TEST_BAN });
    await limiter.consume('noscript', W);
    await client.script('FLUSH');
    const spy = vi.spyOn(client, 'sendCommand');
    const d = await limiter.consume('noscript', W);
    expect(d.windows[0]!.used).toBe(2);
    expect(spy.mock.calls.map(([cmd]) => cmd.name)).toEqual(['evalsha', 'eval']);
    spy.mockRestore();
  });
});

describe('resilient store, unit', () => {
  const hanging: RateLimitStore = { name: 'hanging', consume: () => new Promise(() => undefined), ...inert };

  it('bounds a hanging primary by timeoutMs and falls back', async () => {
    const store = createResilientStore({
      primary: hanging,
      mode: 'fallback',
      timeoutMs: 50,
      fallback: createMemoryStore(),
    });
    const limiter = createLimiter({ store, ban: TEST_BAN });
    const { value, ms } = await timed(() => limiter.consume('hang', W));
    expect(value.source).toBe('memory');
    expect(String(value.fallbackError)).toMatch(/timed out/);
    expect(ms).toBeLessThan(1_000);
    expect(store.degraded).toBe(true);
  });

  it('skips a known-down primary until the retry interval elapsed', async () => {
    let t = 0;
    const consume = vi.fn(() => Promise.reject(new Error('down')));
    const store = createResilientStore({
      primary: { name: 'p', consume, ...inert },
      mode: 'fallback',
      retryIntervalMs: 1000,
      now: () => t,
    });
    const limiter = createLimiter({ store, ban: TEST_BAN });
    await limiter.consume('k', W);
    await limiter.consume('k', W);
    await limiter.consume('k', W);
    expect(consume).toHaveBeenCalledTimes(1);
    t = 1000;
    await limiter.consume('k', W);
    expect(consume).toHaveBeenCalledTimes(2);
  });

  it('refunds a charge where it was made: the fallback during an outage, the primary otherwise', async () => {
    let up = false;
    const primary = createMemoryStore();
    const fallback = createMemoryStore();
    const store = createResilientStore({
      primary: {
        ...inert,
        name: 'p',
        consume: (r) => (up ? primary.consume(r) : Promise.reject(new Error('down'))),
        refund: (r) => primary.refund(r),
      },
      mode: 'fallback',
      retryIntervalMs: 0,
      fallback,
    });
    const limiter = createLimiter({ store, ban: TEST_BAN });
    const during = await limiter.consume('r', W);
    expect(during.fallbackError).toBeDefined();
    await limiter.refund(during);
    expect((await limiter.consume('r', W)).windows[0]!.used).toBe(1); // the fallback's count, refunded
    up = true;
    const after = await limiter.consume('r', W);
    expect(after.source).toBe('memory');
    expect(after.fallbackError).toBeUndefined();
    await limiter.refund(after);
    expect((await primary.consume({ key: 'r', windows: W, ban: null })).counts).toEqual([1, 1]);
  });
});
