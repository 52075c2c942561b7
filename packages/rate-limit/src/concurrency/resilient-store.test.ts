// Concurrency limits through a Redis outage, on a private redis-server that the test starts, kills and restarts.
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createRedisClient } from '../redis-store.js';
import { startPrivateRedis, testPrefix, waitReady, type PrivateRedis } from '../test-utils/redis.js';
import { createConcurrencyLimiter, type ConcurrencyLimiter } from './limiter.js';
import { createMemoryConcurrencyStore } from './memory-store.js';
import { createRedisConcurrencyStore } from './redis-store.js';
import { createResilientConcurrencyStore } from './resilient-store.js';

const prefix = testPrefix();
let redis: PrivateRedis | undefined;
let client: Redis;

beforeAll(async () => {
  redis = await startPrivateRedis();
  client = createRedisClient({ url: redis.url, maxReconnectDelayMs: 200 });
  await waitReady(client);
});
afterAll(async () => {
  client?.disconnect();
  await redis?.stop();
});

/** Acquires (and gives back) until a decision comes from Redis again; bounded. */
async function untilRedis(limiter: ConcurrencyLimiter): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const decision = await limiter.acquire('probe', 5);
    decision.release();
    if (decision.source === 'redis') return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('did not return to Redis');
}

describe('resilient concurrency store over a real Redis outage', () => {
  it('takes slots from memory while Redis is down, gives each back where it came from, returns by itself', async () => {
    const onOutage = vi.fn();
    const onRecover = vi.fn();
    const onReleaseError = vi.fn();
    const fallback = createMemoryConcurrencyStore();
    const redisStore = createRedisConcurrencyStore({ client, prefix });
    const limiter = createConcurrencyLimiter({
      store: createResilientConcurrencyStore({
        primary: redisStore,
        fallback,
        onOutage,
        onRecover,
        retryIntervalMs: 100,
      }),
      onReleaseError,
    });

    const inRedis = await limiter.acquire('outage', 2);
    expect(inRedis).toMatchObject({ allowed: true, source: 'redis' });
    expect(inRedis.fallbackError).toBeUndefined();

    await redis!.stop();
    const during = [await limiter.acquire('outage', 2), await limiter.acquire('outage', 2)];
    const third = await limiter.acquire('outage', 2);
    // Per process meanwhile: the fallback knows nothing of the lease held in Redis.
    expect(during.map((d) => [d.allowed, d.source])).toEqual([
      [true, 'memory'],
      [true, 'memory'],
    ]);
    expect(third).toMatchObject({ allowed: false, source: 'memory', inFlight: 2 });
    expect(third.fallbackError).toBeDefined();
    expect(onOutage).toHaveBeenCalledTimes(1);

    for (const decision of during) decision.release();
    expect(fallback.size).toBe(0);
    inRedis.release(); // Redis is down: the release fails and is reported; the lease will expire there
    await vi.waitFor(() => expect(onReleaseError).toHaveBeenCalledTimes(1));

    await redis!.start();
    await untilRedis(limiter);
    expect(onRecover).toHaveBeenCalledTimes(1);
    const back = await limiter.acquire('after', 1);
    expect(back.source).toBe('redis');
    expect(await client.zcard(redisStore.keyFor('after'))).toBe(1);
    back.release();
    expect(await client.zcard(redisStore.keyFor('after'))).toBe(0);
  }, 30_000);
});
