import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../config/defaults.js';
import { banPolicy } from './policy.js';

describe('banPolicy', () => {
  it('bans after more than 10 refusals in a clock minute, for 15 minutes, by default', () => {
    expect(banPolicy(DEFAULTS.rateLimit)).toEqual({ maxRefusals: 10, windowMs: 60_000, durationMs: 900_000 });
    expect(banPolicy({ banThreshold: 3, banSeconds: 60 })).toEqual({
      maxRefusals: 3,
      windowMs: 60_000,
      durationMs: 60_000,
    });
  });
});
