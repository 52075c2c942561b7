import { describe, expect, it } from 'vitest';
import { DAY_MS, MINUTE_MS, minuteAndDay } from './windows.js';

describe('minuteAndDay', () => {
  it('builds the minute and day windows of a quota', () => {
    expect(minuteAndDay({ perMinute: 300, perDay: 10_000 })).toEqual([
      { name: 'minute', limit: 300, windowMs: MINUTE_MS },
      { name: 'day', limit: 10_000, windowMs: DAY_MS },
    ]);
    expect([MINUTE_MS, DAY_MS]).toEqual([60_000, 86_400_000]);
  });
});
