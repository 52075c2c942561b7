// One behavioural suite, run against every store with an injected clock
// (memory: `now` option; Redis and Redis Cluster: time passed to the Lua script as ARGV).
import { beforeEach, describe, expect, it } from 'vitest';
import { TEST_BAN } from './test-utils/ban.js';
import { createLimiter, type LimiterOptions, type RateLimiter } from './limiter.js';
import { createMemoryStore } from './memory-store.js';
import { DAY_MS, MINUTE_MS, minuteAndDay } from './windows.js';
import { createRedisStore } from './redis-store.js';
import { everyBackend } from './test-utils/backends.js';
import type { RateLimitStore, WindowLimit } from './types.js';

const T0 = Date.UTC(2024, 4, 15, 12, 30, 0, 0); // 2024-05-15T12:30:00.000Z, minute-aligned
const LAST_MS_OF_DAY = Date.UTC(2024, 4, 15, 23, 59, 59, 999);
const NEXT_MIDNIGHT = Date.UTC(2024, 4, 16, 0, 0, 0, 0);

const windows = (perMinute: number, perDay: number): WindowLimit[] => minuteAndDay({ perMinute, perDay });

let clock = T0;
const harnesses = everyBackend<RateLimitStore>(createMemoryStore, createRedisStore, () => clock);

let seq = 0;
describe.each(harnesses)('$name (shared contract)', (h) => {
  let key: string;
  const limiter = (ban: LimiterOptions['ban'] = TEST_BAN): RateLimiter => createLimiter({ store: h.store(), ban });

  beforeEach(() => {
    clock = T0;
    key = `id-${++seq}`;
  });

  it('allows exactly up to the limit and refuses limit + 1', async () => {
    const l = limiter();
    const w = windows(3, 100);
    const remaining: number[] = [];
    for (let i = 0; i < 3; i++) {
      clock = T0 + i * 1000;
      const d = await l.consume(key, w);
      expect(d.allowed).toBe(true);
      expect(d.reason).toBe('allowed');
      expect(d.retryAfterSeconds).toBeNull();
      remaining.push(d.windows[0]!.remaining);
    }
    expect(remaining).toEqual([2, 1, 0]);
    clock = T0 + 3000;
    const refused = await l.consume(key, w);
    expect(refused.allowed).toBe(false);
    expect(refused.reason).toBe('rate_limited');
    expect(refused.windows[0]!.used).toBe(3);
    expect(refused.limiting.name).toBe('minute');
    expect(refused.limiting.remaining).toBe(0);
    expect(refused.retryAfterSeconds).toBe(57);
    expect(refused.now).toBe(T0 + 3000);
  });

  it('resets exactly at the minute boundary (last ms refused, first ms of next window allowed)', async () => {
    const l = limiter();
    const w = windows(2, 100);
    await l.consume(key, w);
    await l.consume(key, w);
    clock = T0 + MINUTE_MS - 1;
    const last = await l.consume(key, w);
    expect(last.allowed).toBe(false);
    expect(last.retryAfterSeconds).toBe(1);
    expect(last.windows[0]!.resetAt).toBe(T0 + MINUTE_MS);
    clock = T0 + MINUTE_MS;
    const next = await l.consume(key, w);
    expect(next.allowed).toBe(true);
    expect(next.windows[0]!.used).toBe(1);
    expect(next.windows[0]!.resetAt).toBe(T0 + 2 * MINUTE_MS);
    expect(next.windows[1]!.used).toBe(3);
  });

  it('rolls the day over at UTC midnight (23:59:59.999 refused, 00:00:00.000 allowed)', async () => {
    const l = limiter();
    const w = windows(100, 2);
    clock = LAST_MS_OF_DAY - 5000;
    expect((await l.consume(key, w)).allowed).toBe(true);
    expect((await l.consume(key, w)).allowed).toBe(true);
    clock = LAST_MS_OF_DAY;
    const refused = await l.consume(key, w);
    expect(refused.allowed).toBe(false);
    expect(refused.limiting.name).toBe('day');
    expect(refused.limiting.resetAt).toBe(NEXT_MIDNIGHT);
    expect(refused.retryAfterSeconds).toBe(1);
    clock = NEXT_MIDNIGHT;
    const allowed = await l.consume(key, w);
    expect(allowed.allowed).toBe(true);
    expect(allowed.windows[1]!.used).toBe(1);
    expect(allowed.windows[1]!.resetAt).toBe(NEXT_MIDNIGHT + DAY_MS);
  });

  it('a request refused by the minute window charges no window', async () => {
    const l = limiter(false);
    const w = windows(2, 10);
    await l.consume(key, w);
    await l.consume(key, w);
    for (let i = 0; i < 5; i++) {
      const d = await l.consume(key, w);
      expect(d.allowed).toBe(false);
      expect(d.windows[1]!.used).toBe(2);
      expect(d.windows[1]!.remaining).toBe(8);
    }
    clock = T0 + MINUTE_MS;
    const d = await l.consume(key, w);
    expect(d.allowed).toBe(true);
    expect(d.windows[1]!.used).toBe(3);
    expect(d.windows[0]!.used).toBe(1);
  });

  it('a request refused by the day window charges no minute', async () => {
    const l = limiter(false);
    const w = windows(10, 1);
    await l.consume(key, w);
    for (let i = 0; i < 3; i++) {
      const d = await l.consume(key, w);
      expect(d.allowed).toBe(false);
      expect(d.windows[0]!.used).toBe(1);
      expect(d.limiting.name).toBe('day');
    }
    // with a higher day limit (plan upgrade), the minute shows only the one charged request
    const upgraded = await l.consume(key, windows(10, 100));
    expect(upgraded.allowed).toBe(true);
    expect(upgraded.windows[0]!.used).toBe(2);
    expect(upgraded.windows[1]!.used).toBe(2);
  });

  it('exposes the most restrictive window: lowest remaining, ties go to the longer window', async () => {
    const l = limiter();
    const minuteTighter = await l.consume(key, windows(3, 50));
    expect(minuteTighter.limiting.name).toBe('minute');
    expect(minuteTighter.limiting.remaining).toBe(2);

    const dayTighter = await l.consume(`${key}-b`, windows(50, 3));
    expect(dayTighter.limiting.name).toBe('day');
    expect(dayTighter.limiting.remaining).toBe(2);

    const tie = await l.consume(`${key}-c`, windows(5, 5));
    expect(tie.windows.map((s) => s.remaining)).toEqual([4, 4]);
    expect(tie.limiting.name).toBe('day');
    expect(tie.limiting.resetAt).toBe(Date.UTC(2024, 4, 16));
  });

  it('Retry-After: refusing window only; the later reset when both refuse', async () => {
    const l = limiter(false);
    const w = windows(2, 2);
    clock = T0 + 10_250;
    await l.consume(key, w);
    await l.consume(key, w);
    const both = await l.consume(key, w);
    expect(both.allowed).toBe(false);
    expect(both.limiting.name).toBe('day'); // tie at 0 -> longer window
    expect(both.retryAfterSeconds).toBe(Math.ceil((Date.UTC(2024, 4, 16) - (T0 + 10_250)) / 1000));

    const k2 = `${key}-minute-only`;
    const w2 = windows(1, 10);
    await l.consume(k2, w2);
    clock = T0 + 30_500;
    const minuteOnly = await l.consume(k2, w2);
    expect(minuteOnly.retryAfterSeconds).toBe(30); // ceil(29.5)
    clock = T0 + 59_001;
    expect((await l.consume(k2, w2)).retryAfterSeconds).toBe(1);
  });

  it('bans on the 11th refusal in the same clock minute, for 900 s; banned requests charge nothing', async () => {
    const l = limiter();
    const w = windows(1, 100);
    expect((await l.consume(key, w)).allowed).toBe(true);
    for (let i = 1; i <= 10; i++) {
      clock = T0 + i * 100;
      const d = await l.consume(key, w);
      expect(d.reason).toBe('rate_limited');
      expect(d.banStarted).toBe(false);
    }
    clock = T0 + 1_100;
    const eleventh = await l.consume(key, w);
    expect(eleventh.reason).toBe('banned');
    expect(eleventh.banStarted).toBe(true);
    expect(eleventh.banUntil).toBe(T0 + 1_100 + 900_000);
    expect(eleventh.retryAfterSeconds).toBe(900);

    // every request during the ban, even in fresh windows, is banned and charges nothing
    for (let i = 1; i <= 30; i++) {
      clock = T0 + 1_100 + i * 20_000;
      const d = await l.consume(key, w);
      expect(d.reason).toBe('banned');
      expect(d.banStarted).toBe(false);
      expect(d.windows[1]!.used).toBe(1);
    }
    clock = T0 + 1_100 + 900_000 - 1;
    const lastMs = await l.consume(key, w);
    expect(lastMs.reason).toBe('banned');
    expect(lastMs.retryAfterSeconds).toBe(1);

    clock = T0 + 1_100 + 900_000; // exactly at expiry
    const after = await l.consume(key, w);
    expect(after.allowed).toBe(true);
    expect(after.banUntil).toBeNull();
    expect(after.windows[1]!.used).toBe(2);
  });

  it('counts refusals per clock minute: 10 + 10 across a boundary does not ban', async () => {
    const l = limiter();
    const w = windows(1, 100);
    clock = T0 + 50_000;
    await l.consume(key, w);
    for (let i = 0; i < 10; i++) expect((await l.consume(key, w)).reason).toBe('rate_limited');
    clock = T0 + MINUTE_MS;
    await l.consume(key, w);
    for (let i = 0; i < 10; i++) expect((await l.consume(key, w)).reason).toBe('rate_limited');
    expect((await l.consume(key, w)).reason).toBe('banned');
  });

  it('banned requests do not count as refusals; the refusal counter restarts after a ban', async () => {
    const l = limiter({ ...TEST_BAN, durationMs: 5_000 });
    const w = windows(1, 100);
    clock = T0 + 10_000;
    await l.consume(key, w);
    for (let i = 0; i < 10; i++) await l.consume(key, w);
    const ban = await l.consume(key, w);
    expect(ban.banStarted).toBe(true);
    expect(ban.banUntil).toBe(T0 + 15_000);
    for (let i = 0; i < 20; i++) {
      clock = T0 + 11_000 + i * 100;
      expect((await l.consume(key, w)).reason).toBe('banned');
    }
    clock = T0 + 15_000; // ban over, same clock minute, minute window still full
    for (let i = 0; i < 10; i++) {
      const d = await l.consume(key, w);
      expect(d.reason).toBe('rate_limited');
      expect(d.windows[0]!.used).toBe(1);
    }
    expect((await l.consume(key, w)).banStarted).toBe(true);
  });

  it('never bans when bans are disabled', async () => {
    const l = limiter(false);
    const w = windows(1, 1000);
    await l.consume(key, w);
    for (let i = 0; i < 50; i++) expect((await l.consume(key, w)).reason).toBe('rate_limited');
  });

  it('keeps identities independent', async () => {
    const l = limiter();
    const w = windows(2, 100);
    const a = `${key}-a`;
    const b = `${key}-b`;
    await l.consume(a, w);
    await l.consume(a, w);
    for (let i = 0; i < 11; i++) await l.consume(a, w); // a is banned now
    expect((await l.consume(a, w)).reason).toBe('banned');
    const firstB = await l.consume(b, w);
    expect(firstB.allowed).toBe(true);
    expect(firstB.windows[0]!.used).toBe(1);
    expect((await l.consume(b, w)).allowed).toBe(true);
    expect((await l.consume(b, w)).reason).toBe('rate_limited');
  });

  it('a zero limit refuses every request', async () => {
    const l = limiter(false);
    const d = await l.consume(key, windows(0, 100));
    expect(d.allowed).toBe(false);
    expect(d.limiting.name).toBe('minute');
    expect(d.retryAfterSeconds).toBe(60);
  });

  it('resetKey forgets one identity: its counters, refusals and ban, and no other identity', async () => {
    const store = h.store();
    const l = createLimiter({ store, ban: { maxRefusals: 1, windowMs: MINUTE_MS, durationMs: 10 * MINUTE_MS } });
    const w = windows(1, 100);
    const other = `${key}-other`;
    expect((await l.consume(key, w)).allowed).toBe(true);
    expect((await l.consume(other, w)).allowed).toBe(true);
    let reason = '';
    for (let i = 0; i < 5 && reason !== 'banned'; i++) reason = (await l.consume(key, w)).reason;
    expect(reason).toBe('banned');
    await store.resetKey(key);
    const after = await l.consume(key, w);
    expect(after.allowed).toBe(true);
    expect(after.windows.map((window) => window.used)).toEqual([1, 1]);
    expect((await l.consume(other, w)).reason).toBe('rate_limited'); // untouched
  });

  it('refund takes back one charge of the windows it fell in, never a refusal, a ban or below zero', async () => {
    const store = h.store();
    const l = createLimiter({ store, ban: { maxRefusals: 0, windowMs: MINUTE_MS, durationMs: 10 * MINUTE_MS } });
    const w = windows(2, 100);
    const first = await l.consume(key, w);
    const second = await l.consume(key, w);
    await l.refund(second);
    // Room again in this minute: the refunded request does not count.
    const third = await l.consume(key, w);
    expect(third.allowed).toBe(true);
    expect(third.windows.map((window) => window.used)).toEqual([2, 2]);
    // A charge made in a minute that has passed: only the day's counter, still the same day, goes down.
    clock = T0 + MINUTE_MS;
    await l.refund(first);
    const next = await l.consume(key, w);
    expect(next.windows.map((window) => window.used)).toEqual([1, 2]);
    // A refusal charged nothing and refunds nothing; the ban it started stays.
    await l.consume(key, w);
    const refused = await l.consume(key, w);
    expect(refused.reason).toBe('banned');
    await l.refund(refused);
    expect((await l.consume(key, w)).reason).toBe('banned');
    // Never below zero: refunds of an identity with nothing charged change nothing.
    const fresh = `${key}-fresh`;
    await l.refund({ ...first, key: fresh });
    expect((await l.consume(fresh, w)).windows.map((window) => window.used)).toEqual([1, 1]);
  });
});
