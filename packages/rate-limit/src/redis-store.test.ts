// Redis-specific behaviour: real Redis TIME, one round trip, NOSCRIPT recovery,
// key layout / expiry, and atomicity across two limiter instances.
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TEST_BAN } from './test-utils/ban.js';
import { createLimiter, type RateLimitDecision } from './limiter.js';
import { DAY_MS, MINUTE_MS, minuteAndDay } from './windows.js';
import { createRedisStore } from './redis-store.js';
import { connect, deletePrefix, testPrefix } from './test-utils/redis.js';
import type { WindowLimit } from './types.js';

let a: Redis;
let b: Redis;
// (undefined when Redis is unreachable: beforeAll then fails every test)
const prefix = testPrefix();
/** The free plan's windows: 60 a minute, 1000 a day. */
const FREE = minuteAndDay({ perMinute: 60, perDay: 1000 });

beforeAll(async () => {
  a = await connect();
  b = await connect();
});
afterAll(async () => {
  if (a !== undefined) await deletePrefix(a, prefix);
  a?.disconnect();
  b?.disconnect();
});

async function redisTimeMs(client: Redis): Promise<number> {
  const [s, us] = await client.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

function hashTag(key: string): string {
  const open = key.indexOf('{');
  const close = key.indexOf('}', open + 1);
  return key.slice(open + 1, close);
}

describe('redis store, real time', () => {
  it('takes time from Redis TIME, not from the local clock', async () => {
    const limiter = createLimiter({ store: createRedisStore({ client: a, prefix }), ban: TEST_BAN });
    const before = await redisTimeMs(a);
    const fake = Date.UTC(2001, 0, 1);
    const spy = vi.spyOn(Date, 'now').mockReturnValue(fake);
    let d: RateLimitDecision;
    try {
      d = await limiter.consume('real-time', FREE);
    } finally {
      spy.mockRestore();
    }
    const after = await redisTimeMs(a);
    expect(d.allowed).toBe(true);
    expect(d.now).toBeGreaterThanOrEqual(before);
    expect(d.now).toBeLessThanOrEqual(after);
    expect(d.windows[0]!.resetAt).toBe(Math.floor(d.now / MINUTE_MS) * MINUTE_MS + MINUTE_MS);
    expect(d.windows[1]!.resetAt).toBe(Math.floor(d.now / DAY_MS) * DAY_MS + DAY_MS);
  });

  it('stores keys under one hash tag per identity, expiring at the window end', async () => {
    // Both decisions at one instant of Redis time, so no minute boundary can fall between them.
    const at = await redisTimeMs(a);
    const store = createRedisStore({ client: a, prefix, now: () => at });
    const limiter = createLimiter({ store, ban: { ...TEST_BAN, maxRefusals: 0 } });
    const w: WindowLimit[] = [
      { name: 'minute', limit: 1, windowMs: MINUTE_MS },
      { name: 'day', limit: 10, windowMs: DAY_MS },
    ];
    const identity = 'layout';
    const first = await limiter.consume(identity, w);
    expect(first.allowed).toBe(true);
    const refusal = await limiter.consume(identity, w); // refusal 1 > 0 -> ban key written
    expect(refusal.banStarted).toBe(true);

    const [minuteKey, dayKey, banKey, refusalKey] = store.keysFor(identity, [MINUTE_MS, DAY_MS]);
    expect(minuteKey).toBe(`{${prefix}${identity}}:w:60000`);
    const tags = new Set([minuteKey, dayKey, banKey, refusalKey].map((k) => hashTag(k!)));
    expect([...tags]).toEqual([`${prefix}${identity}`]);

    const now = await redisTimeMs(a);
    const minutePttl = await a.pttl(minuteKey!);
    const dayPttl = await a.pttl(dayKey!);
    const banPttl = await a.pttl(banKey!);
    expect(minutePttl).toBeGreaterThan(0);
    expect(minutePttl).toBeLessThanOrEqual(first.windows[0]!.resetAt - first.now);
    expect(Math.abs(now + minutePttl - first.windows[0]!.resetAt)).toBeLessThan(1_000);
    expect(Math.abs(now + dayPttl - first.windows[1]!.resetAt)).toBeLessThan(1_000);
    expect(Math.abs(now + banPttl - refusal.banUntil!)).toBeLessThan(1_000);
    expect(await a.hget(minuteKey!, 'c')).toBe('1');
  });

  it('uses exactly one round trip (EVALSHA) per decision', async () => {
    const client = await connect();
    try {
      const at = await redisTimeMs(client); // one instant for both decisions: no window boundary between them
      const limiter = createLimiter({ store: createRedisStore({ client, prefix, now: () => at }), ban: TEST_BAN });
      await limiter.consume('rt', FREE); // script loaded
      const spy = vi.spyOn(client, 'sendCommand');
      const d = await limiter.consume('rt', FREE);
      expect(d.windows[0]!.used).toBe(2);
      expect(spy.mock.calls.map(([cmd]) => cmd.name)).toEqual(['evalsha']);
      spy.mockRestore();
    } finally {
      client.disconnect();
    }
  });
});

describe('redis store, concurrency', () => {
  it('two limiter instances, 80 concurrent consumes, 60/minute -> exactly 60 allowed (injected time)', async () => {
    const t = Date.UTC(2024, 0, 1, 10, 0, 30);
    const one = createLimiter({ store: createRedisStore({ client: a, prefix, now: () => t }), ban: TEST_BAN });
    const two = createLimiter({ store: createRedisStore({ client: b, prefix, now: () => t }), ban: TEST_BAN });
    const w = FREE;
    const decisions = await Promise.all(
      Array.from({ length: 80 }, (_, i) => (i % 2 === 0 ? one : two).consume('concurrent-fixed', w)),
    );
    expect(decisions.filter((d) => d.allowed)).toHaveLength(60);
    const used = decisions
      .filter((d) => d.allowed)
      .map((d) => d.windows[0]!.used)
      .sort((x, y) => x - y);
    expect(used).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    expect(decisions.filter((d) => !d.allowed).every((d) => d.windows[1]!.used === 60)).toBe(true);
  });

  it('two limiter instances, 80 concurrent consumes, 60/minute -> exactly 60 allowed (Redis TIME)', async () => {
    const one = createLimiter({ store: createRedisStore({ client: a, prefix }), ban: false });
    const two = createLimiter({ store: createRedisStore({ client: b, prefix }), ban: false });
    const w = FREE;
    // If the burst straddles a minute (or day) boundary the split is legitimate: retry with a new identity.
    for (let attempt = 0; attempt < 3; attempt++) {
      const key = `concurrent-real-${attempt}`;
      const decisions = await Promise.all(
        Array.from({ length: 80 }, (_, i) => (i % 2 === 0 ? one : two).consume(key, w)),
      );
      const windowsSeen = new Set(decisions.map((d) => `${d.windows[0]!.resetAt}/${d.windows[1]!.resetAt}`));
      if (windowsSeen.size > 1) continue;
      expect(decisions.filter((d) => d.allowed)).toHaveLength(60);
      expect(decisions.filter((d) => !d.allowed).every((d) => d.reason === 'rate_limited')).toBe(true);
      return;
    }
    throw new Error('three bursts in a row straddled a window boundary');
  });
});
