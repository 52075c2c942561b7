import { describe, expect, it } from 'vitest';
import { createLimiter } from './limiter.js';
import { createMemoryStore } from './memory-store.js';
import { DAY_MS, MINUTE_MS } from './windows.js';
import { createRedisStore } from './redis-store.js';
import { useRedisBackends } from './test-utils/backends.js';
import type { RateLimitStore, WindowLimit } from './types.js';
import { rateLimitHeaders, usageHeaders } from './headers.js';
import { readUsage } from './usage.js';

const T0 = Date.UTC(2024, 4, 15, 12, 30, 10, 0);
const windows: WindowLimit[] = [
  { name: 'minute', limit: 3, windowMs: MINUTE_MS },
  { name: 'day', limit: 100, windowMs: DAY_MS },
];

const backends = useRedisBackends();

const stores: [string, () => RateLimitStore][] = [
  ['memory', () => createMemoryStore({ now: () => T0 })],
  [
    'redis',
    () => createRedisStore({ client: backends.redis(), prefix: `${backends.prefix}${Math.random()}:`, now: () => T0 }),
  ],
];

describe.each(stores)('readUsage on the %s store', (_name, makeStore) => {
  it('reports what was charged, charges nothing itself, and counts no refusal', async () => {
    const store = makeStore();
    const limiter = createLimiter({ store, ban: { maxRefusals: 0, windowMs: MINUTE_MS, durationMs: 60_000 } });
    expect((await readUsage(store, 'k', windows)).windows.map((w) => w.used)).toEqual([0, 0]);
    await limiter.consume('k', windows);
    await limiter.consume('k', windows);
    for (let i = 0; i < 5; i++) {
      const usage = await readUsage(store, 'k', windows);
      expect(usage.windows.map((w) => [w.used, w.remaining, w.limit])).toEqual([
        [2, 1, 3],
        [2, 98, 100],
      ]);
      expect(usage.windows[0]!.resetAt).toBe(Date.UTC(2024, 4, 15, 12, 31, 0, 0));
      expect(usage.banUntil).toBeNull();
    }
    // Readings counted no refusal: with a ban after the first refusal, the third request still goes through.
    expect((await limiter.consume('k', windows)).allowed).toBe(true);
  });

  it('reports an active ban and its end', async () => {
    const store = makeStore();
    const limiter = createLimiter({ store, ban: { maxRefusals: 0, windowMs: MINUTE_MS, durationMs: 60_000 } });
    for (let i = 0; i < 3; i++) await limiter.consume('b', windows);
    expect((await limiter.consume('b', windows)).reason).toBe('banned');
    const usage = await readUsage(store, 'b', windows);
    expect(usage.banUntil).toBe(T0 + 60_000);
    expect(usage.windows[0]!.used).toBe(3);
  });

  it("gives the headers an allowed request would carry, and a banned one's while banned (usageHeaders)", async () => {
    const store = makeStore();
    const limiter = createLimiter({ store, ban: { maxRefusals: 0, windowMs: MINUTE_MS, durationMs: 60_000 } });
    const allowed = await limiter.consume('h', windows);
    const read = usageHeaders(await readUsage(store, 'h', windows));
    expect(read).toEqual(rateLimitHeaders(allowed));
    expect(read.RateLimit).toBe('"minute";r=2;t=50, "day";r=99;t=41390');
    for (let i = 0; i < 3; i++) await limiter.consume('h', windows);
    const banned = usageHeaders(await readUsage(store, 'h', windows));
    expect(banned).toMatchObject({ 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String((T0 + 60_000) / 1000) });
    expect(banned.RateLimit).toBe('"minute";r=0;t=60, "day";r=0;t=41390');
    expect(banned['Retry-After']).toBeUndefined();
  });
});
