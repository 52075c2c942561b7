import { describe, expect, it } from 'vitest';
import { TEST_BAN } from './test-utils/ban.js';
import { createLimiter } from './limiter.js';
import { createMemoryStore } from './memory-store.js';
import { DAY_MS, MINUTE_MS } from './windows.js';
import type { WindowLimit } from './types.js';

const T0 = Date.UTC(2024, 4, 15, 12, 0, 0);
const MINUTE_ONLY: WindowLimit[] = [{ name: 'minute', limit: 10, windowMs: MINUTE_MS }];
const BOTH: WindowLimit[] = [...MINUTE_ONLY, { name: 'day', limit: 100, windowMs: DAY_MS }];

describe('memory store', () => {
  it('never holds more identities than maxKeys', async () => {
    const t = T0;
    const store = createMemoryStore({ now: () => t, maxKeys: 100 });
    const limiter = createLimiter({ store, ban: TEST_BAN });
    for (let i = 0; i < 1_000; i++) {
      await limiter.consume(`k${i}`, BOTH);
      expect(store.size).toBeLessThanOrEqual(100);
    }
    expect(store.size).toBe(100);
  });

  it('evicts expired entries before live ones when full', async () => {
    let t = T0;
    const store = createMemoryStore({ now: () => t, maxKeys: 10, sweepBatch: 0 });
    const limiter = createLimiter({ store, ban: TEST_BAN });
    // 5 live-all-day identities with 2 requests each, then 5 minute-only ones
    for (let i = 0; i < 5; i++) {
      await limiter.consume(`day${i}`, BOTH);
      await limiter.consume(`day${i}`, BOTH);
    }
    for (let i = 0; i < 5; i++) await limiter.consume(`min${i}`, MINUTE_ONLY);
    expect(store.size).toBe(10);
    t = T0 + MINUTE_MS; // the minute-only entries are expired now
    for (let i = 0; i < 5; i++) await limiter.consume(`new${i}`, MINUTE_ONLY);
    expect(store.size).toBe(10);
    // the day identities survived with their counters (expired ones were evicted instead)
    for (let i = 0; i < 5; i++) {
      const d = await limiter.consume(`day${i}`, BOTH);
      expect(d.windows[1]!.used).toBe(3);
    }
  });

  it('evicts the least recently used identity when nothing is expired', async () => {
    const t = T0;
    const store = createMemoryStore({ now: () => t, maxKeys: 3, sweepBatch: 0 });
    const limiter = createLimiter({ store, ban: TEST_BAN });
    await limiter.consume('a', BOTH);
    await limiter.consume('b', BOTH);
    await limiter.consume('c', BOTH);
    await limiter.consume('a', BOTH); // a is now the most recently used
    await limiter.consume('d', BOTH); // evicts b
    expect((await limiter.consume('a', BOTH)).windows[0]!.used).toBe(3);
    expect((await limiter.consume('b', BOTH)).windows[0]!.used).toBe(1);
  });

  it('sweeps expired entries incrementally as it is used', async () => {
    let t = T0;
    const store = createMemoryStore({ now: () => t });
    const limiter = createLimiter({ store, ban: TEST_BAN });
    for (let i = 0; i < 200; i++) await limiter.consume(`k${i}`, MINUTE_ONLY);
    expect(store.size).toBe(200);
    t = T0 + MINUTE_MS;
    for (let i = 0; i < 200; i++) await limiter.consume('hot', MINUTE_ONLY);
    expect(store.size).toBe(1);
  });

  it('sweep() removes everything expired, and a ban keeps its entry alive until it ends', async () => {
    let t = T0;
    const store = createMemoryStore({ now: () => t, sweepBatch: 0 });
    const limiter = createLimiter({ store, ban: { ...TEST_BAN, maxRefusals: 0, durationMs: 5 * MINUTE_MS } });
    await limiter.consume('a', MINUTE_ONLY);
    await limiter.consume('banned', [{ name: 'minute', limit: 0, windowMs: MINUTE_MS }]);
    expect(store.size).toBe(2);
    t = T0 + MINUTE_MS;
    expect(store.sweep()).toBe(1);
    expect(store.size).toBe(1);
    t = T0 + 5 * MINUTE_MS;
    expect(store.sweep()).toBe(1);
    expect(store.size).toBe(0);
  });

  it('creates no timers or handles that keep the process alive', async () => {
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const store = createMemoryStore();
    const limiter = createLimiter({ store, ban: TEST_BAN });
    for (let i = 0; i < 1000; i++) await limiter.consume(`k${i % 50}`, BOTH);
    store.sweep();
    const after = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    expect(after).toBe(before);
  });

  it('rejects an invalid capacity', () => {
    expect(() => createMemoryStore({ maxKeys: 0 })).toThrow(RangeError);
  });
});
