import { describe, expect, it } from 'vitest';
import { DAY_MS, MINUTE_MS, PLAN_LIMITS, limitsForPlan } from './plans.js';

describe('plans', () => {
  it('has the plan table from the issue', () => {
    expect(PLAN_LIMITS).toEqual({
      free: { perMinute: 60, perDay: 1000 },
      pro: { perMinute: 300, perDay: 10_000 },
      business: { perMinute: 1000, perDay: 100_000 },
    });
  });

  it('builds the minute and day windows of a plan', () => {
    expect(limitsForPlan('pro')).toEqual([
      { name: 'minute', limit: 300, windowMs: MINUTE_MS },
      { name: 'day', limit: 10_000, windowMs: DAY_MS },
    ]);
    expect(limitsForPlan('free', { perMinute: 5000 })[0]!.limit).toBe(60); // custom only for enterprise
  });

  it('uses the key’s own limits for enterprise, falling back to business per missing value', () => {
    expect(limitsForPlan('enterprise', { perMinute: 5000, perDay: 2_000_000 }).map((w) => w.limit)).toEqual([
      5000, 2_000_000,
    ]);
    expect(limitsForPlan('enterprise', { perMinute: 5000, perDay: null }).map((w) => w.limit)).toEqual([5000, 100_000]);
    expect(limitsForPlan('enterprise').map((w) => w.limit)).toEqual([1000, 100_000]);
  });

  it('rejects unknown plans and invalid custom values', () => {
    expect(() => limitsForPlan('gold' as never)).toThrow(RangeError);
    expect(() => limitsForPlan('toString' as never)).toThrow(RangeError);
    expect(() => limitsForPlan('enterprise', { perMinute: -1 })).toThrow(RangeError);
    expect(() => limitsForPlan('enterprise', { perDay: 1.5 })).toThrow(RangeError);
  });
});
