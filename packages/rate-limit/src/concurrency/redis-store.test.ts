// The Redis concurrency store on a real Redis: its key and expiry, its round trips, and a replica that dies holding
// slots (a real process, SIGKILLed).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { CONCURRENCY_LUA } from '../lua-scripts/concurrency.js';
import { useRedisBackends } from '../test-utils/backends.js';
import { REDIS_URL, connect, killProcess } from '../test-utils/redis.js';
import { createConcurrencyLimiter } from './limiter.js';
import { createRedisConcurrencyStore } from './redis-store.js';

const backends = useRedisBackends();
const { prefix } = backends;
let client: Redis;
beforeAll(() => {
  client = backends.redis();
});

async function redisTimeMs(): Promise<number> {
  const [s, us] = await client.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

describe('redis concurrency store', () => {
  it('keeps leases in one sorted set per identity, scored by expiry in Redis time, expiring with the last', async () => {
    const store = createRedisConcurrencyStore({ client, prefix });
    const limiter = createConcurrencyLimiter({ store, leaseMs: 20_000 });
    const before = await redisTimeMs();
    const held = await limiter.acquire('layout', 5);
    const after = await redisTimeMs();
    const key = store.keyFor('layout');
    expect(key).toBe(`{${prefix}layout}:leases`);
    const [lease, score] = await client.zrange(key, 0, -1, 'WITHSCORES');
    expect(lease).toMatch(/^[\w-]+:1$/);
    expect(Number(score)).toBeGreaterThanOrEqual(before + 20_000);
    expect(Number(score)).toBeLessThanOrEqual(after + 20_000);
    const pttl = await client.pttl(key);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(20_000);
    held.release();
    expect(await client.zcard(key)).toBe(0);
    expect(await client.exists(key)).toBe(0);
  });

  it('costs one EVALSHA to acquire and one ZREM to release', async () => {
    const own = await connect();
    try {
      const limiter = createConcurrencyLimiter({ store: createRedisConcurrencyStore({ client: own, prefix }) });
      (await limiter.acquire('trips', 5)).release(); // script loaded
      const spy = vi.spyOn(own, 'sendCommand');
      const held = await limiter.acquire('trips', 5);
      held.release();
      await own.ping();
      expect(spy.mock.calls.map(([command]) => command.name)).toEqual(['evalsha', 'zrem', 'ping']);
    } finally {
      own.disconnect();
    }
  });

  it('keeps the slots of a process killed while holding them until their leases expire', async () => {
    const key = 'killed-replica';
    const storeKey = createRedisConcurrencyStore({ client, prefix }).keyFor(key);
    // Another process takes both slots with the same script, says so, and waits to be killed.
    const replica = spawn(process.execPath, ['--input-type=module', '-e', REPLICA], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: { ...process.env, REDIS_URL, LUA: CONCURRENCY_LUA, KEY: storeKey },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const [line] = await once(replica.stdout, 'data');
      expect(String(line).trim()).toBe('held 2');
    } finally {
      await killProcess(replica);
    }
    const at = await redisTimeMs();
    const asOf = (now: number) =>
      createConcurrencyLimiter({ store: createRedisConcurrencyStore({ client, prefix, now: () => now }) });
    expect((await asOf(at).acquire(key, 2)).allowed).toBe(false);
    const later = await asOf(at + 60_000).acquire(key, 2);
    expect(later).toMatchObject({ allowed: true, inFlight: 1 });
  });
});

/** The dying replica: two leases of 60 s through the store's own script, then it waits. */
const REPLICA = `
import { Redis } from 'ioredis';
const redis = new Redis(process.env.REDIS_URL);
let n = 0;
for (const lease of ['dead:1', 'dead:2']) n = (await redis.eval(process.env.LUA, 1, process.env.KEY, 2, 60000, lease, ''))[1];
console.log('held ' + n);
setInterval(() => {}, 1000);
`;
