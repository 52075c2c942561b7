import { describe, expect, it } from 'vitest';
import { customLimitsProblem, PLAN_LIMITS, PLAN_NAMES, planQuota } from './plans.js';

describe('plans', () => {
  it('has the plan table from the issue', () => {
    expect(PLAN_LIMITS).toEqual({
      free: { perMinute: 60, perDay: 1000, concurrentRequests: 5 },
      pro: { perMinute: 300, perDay: 10_000, concurrentRequests: 20 },
      business: { perMinute: 1000, perDay: 100_000, concurrentRequests: 50 },
    });
    expect([...PLAN_NAMES]).toEqual(['free', 'pro', 'business', 'enterprise']);
  });

  it('gives the quota of a plan', () => {
    expect(planQuota('pro')).toEqual({ perMinute: 300, perDay: 10_000, concurrentRequests: 20 });
    expect(planQuota('free', { perMinute: 5000, concurrentRequests: 99 })).toEqual(PLAN_LIMITS.free); // enterprise only
  });

  it('uses the key’s own limits for enterprise, falling back to business per missing value', () => {
    expect(planQuota('enterprise', { perMinute: 5000, perDay: 2_000_000, concurrentRequests: 400 })).toEqual({
      perMinute: 5000,
      perDay: 2_000_000,
      concurrentRequests: 400,
    });
    expect(planQuota('enterprise', { perMinute: 5000, perDay: null })).toEqual({
      perMinute: 5000,
      perDay: 100_000,
      concurrentRequests: 50,
    });
    expect(planQuota('enterprise')).toEqual(PLAN_LIMITS.business);
  });

  it('rejects unknown plans and invalid custom values', () => {
    expect(() => planQuota('gold' as never)).toThrow(RangeError);
    expect(() => planQuota('toString' as never)).toThrow(RangeError);
    expect(() => planQuota('enterprise', { perMinute: -1 })).toThrow(RangeError);
    expect(() => planQuota('enterprise', { perDay: 1.5 })).toThrow(RangeError);
    expect(() => planQuota('enterprise', { concurrentRequests: -2 })).toThrow(RangeError);
  });

  it('takes concurrent requests of enterprise keys only, optional, whole from 1', () => {
    const both = { perMinute: 10, perDay: 100 };
    expect(customLimitsProblem('enterprise', both)).toBeUndefined();
    expect(customLimitsProblem('enterprise', { ...both, concurrentRequests: 200 })).toBeUndefined();
    expect(customLimitsProblem('enterprise', { ...both, concurrentRequests: 0 })).toMatch(/whole numbers from 1/);
    expect(customLimitsProblem('enterprise', { concurrentRequests: 200 })).toMatch(/need their own per-minute/);
    expect(customLimitsProblem('pro', { concurrentRequests: 200 })).toMatch(/set by the plan/);
  });

  it('takes an enterprise key only with both limits, and never more per minute than per day', () => {
    expect(customLimitsProblem('enterprise', { perMinute: 100, perDay: 100 })).toBeUndefined();
    expect(customLimitsProblem('enterprise', { perMinute: 500, perDay: 100 })).toBe(
      'perMinute (500) must not exceed perDay (100): a day holds the minutes',
    );
    expect(customLimitsProblem('enterprise', { perMinute: 5 })).toMatch(/need their own/);
    expect(customLimitsProblem('pro', { perDay: 5 })).toMatch(/enterprise keys/);
  });
});
