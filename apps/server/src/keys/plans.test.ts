import { PLAN_NAMES } from '@animal-store/contract';
import { PLANS } from '@animal-store/rate-limit';
import { describe, expect, it } from 'vitest';

describe('plans', () => {
  it('the contract (which depends on nothing of ours) names exactly the rate-limit package plans', () => {
    expect([...PLAN_NAMES]).toEqual([...PLANS]);
  });
});
