import type { RateLimitDecision } from '@animal-store/rate-limit';
import { describe, expect, it } from 'vitest';
import { RefusedAddresses } from './refused-addresses.js';

const window = { name: 'minute', limit: 60, windowMs: 60_000, used: 60, remaining: 0, resetAt: 60_000 };
const refused = (now: number, extra: Partial<RateLimitDecision> = {}): RateLimitDecision => ({
  allowed: false,
  reason: 'rate_limited',
  key: 'ip:1.2.3.4',
  now,
  windows: [window],
  limiting: window,
  retryAfterSeconds: Math.ceil((60_000 - now) / 1000),
  banUntil: null,
  banStarted: false,
  source: 'memory',
  ...extra,
});

describe('RefusedAddresses', () => {
  it('restates a refusal until its window resets, with Retry-After counting down', () => {
    let now = 10_000;
    const refusals = new RefusedAddresses(() => now);
    refusals.remember('1.2.3.4', refused(now));
    expect(refusals.check('5.6.7.8')).toBeUndefined();
    now = 30_500;
    expect(refusals.check('1.2.3.4')).toMatchObject({ allowed: false, now: 30_500, retryAfterSeconds: 30 });
    now = 60_000;
    expect(refusals.check('1.2.3.4')).toBeUndefined();
  });

  it('keeps a ban until it ends, never marks a restated refusal as starting one, and forgets allowed decisions', () => {
    let now = 0;
    const refusals = new RefusedAddresses(() => now);
    refusals.remember(
      '1.2.3.4',
      refused(now, { reason: 'banned', banUntil: 900_000, banStarted: true, retryAfterSeconds: 900 }),
    );
    refusals.remember('5.6.7.8', { ...refused(now), allowed: true, reason: 'allowed', retryAfterSeconds: null });
    now = 600_000;
    expect(refusals.check('1.2.3.4')).toMatchObject({ reason: 'banned', retryAfterSeconds: 300, banStarted: false });
    expect(refusals.check('5.6.7.8')).toBeUndefined();
  });

  it('is bounded: the oldest address goes first', () => {
    const refusals = new RefusedAddresses(() => 0, 2);
    for (const address of ['a', 'b', 'c']) refusals.remember(address, refused(0));
    expect(refusals.check('a')).toBeUndefined();
    expect(refusals.check('c')).toBeDefined();
  });
});
