import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NewApiKey } from './admin-schemas.js';
import { DATE_TIME_RANGE, dateTimeMs, readDateTime } from './date-time.js';

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const leap = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
const daysIn = (year: number, month: number) =>
  month === 2 ? (leap(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;

interface Parts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  fraction: string | undefined;
  t: string;
  offset: string;
}

/** The parts of an RFC 3339 date-time, each within its range. */
const parts: fc.Arbitrary<Parts> = fc
  .record({
    year: fc.integer({ min: 0, max: 9999 }),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 1, max: 31 }),
    hour: fc.integer({ min: 0, max: 23 }),
    minute: fc.integer({ min: 0, max: 59 }),
    second: fc.integer({ min: 0, max: 59 }),
    fraction: fc.option(fc.stringMatching(/^[0-9]{1,9}$/), { nil: undefined }),
    t: fc.constantFrom('T', 't'),
    offset: fc.oneof(
      fc.constantFrom('Z', 'z', '-00:00'),
      fc
        .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
        .map(([sign, h, m]) => `${sign}${pad(h)}:${pad(m)}`),
    ),
  })
  .map((p) => ({ ...p, day: Math.min(p.day, daysIn(p.year, p.month)) }));

const text = (p: Parts) =>
  `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)}${p.t}${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}` +
  `${p.fraction === undefined ? '' : `.${p.fraction}`}${p.offset}`;

/** An independent reading: the engine's ISO parser on the upper-case form with the fraction cut to milliseconds. */
const oracle = (s: string) => Date.parse(s.toUpperCase().replace(/(\.\d{3})\d+/, '$1'));

describe('the RFC 3339 date-time rule (admin API expiry, every date-time answer)', () => {
  it('accepts every well-formed date-time in range and reads the instant the engine reads', () => {
    fc.assert(
      fc.property(parts, (p) => {
        const s = text(p);
        const ms = dateTimeMs(s);
        const expected = oracle(s);
        if (expected < DATE_TIME_RANGE.min || expected > DATE_TIME_RANGE.max) expect(ms, s).toBeUndefined();
        else expect(ms, s).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });

  it('writes every accepted instant back in a form it accepts again (toISOString)', () => {
    fc.assert(
      fc.property(parts, (p) => {
        const ms = dateTimeMs(text(p));
        if (ms !== undefined) expect(dateTimeMs(new Date(ms).toISOString())).toBe(ms);
      }),
    );
  });

  it('refuses offsets out of range and offsets without a colon', () => {
    const badOffset = fc.oneof(
      fc
        .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 24, max: 99 }), fc.integer({ min: 0, max: 99 }))
        .map(([s, h, m]) => `${s}${pad(h)}:${pad(m)}`),
      fc
        .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 99 }), fc.integer({ min: 60, max: 99 }))
        .map(([s, h, m]) => `${s}${pad(h)}:${pad(m)}`),
      fc
        .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
        .map(([s, h, m]) => `${s}${pad(h)}${pad(m)}`),
    );
    fc.assert(
      fc.property(parts, badOffset, (p, offset) => {
        expect(dateTimeMs(text({ ...p, offset }))).toBeUndefined();
      }),
    );
  });

  it('refuses leap seconds, days that do not exist and hours or minutes out of range', () => {
    fc.assert(
      fc.property(
        parts,
        fc.constantFrom('second', 'day', 'month', 'hour', 'minute'),
        fc.integer({ min: 0, max: 39 }),
        (p, field, over) => {
          const broken = {
            second: { second: 60 + (over % 40) },
            day: { day: daysIn(p.year, p.month) + 1 + (over % (99 - 31)) },
            month: { month: over % 2 === 0 ? 0 : 13 + over },
            hour: { hour: 24 + over },
            minute: { minute: 60 + over },
          }[field];
          expect(dateTimeMs(text({ ...p, ...broken }))).toBeUndefined();
        },
      ),
    );
    expect(readDateTime('2030-01-01T23:59:60Z')).toEqual({ problem: 'must not name a leap second (seconds 00-59)' });
    expect(dateTimeMs('2031-02-29T00:00:00Z')).toBeUndefined();
    expect(dateTimeMs('2032-02-29T00:00:00Z')).toBe(Date.UTC(2032, 1, 29));
  });

  it('accepts nothing else: any accepted string, random or a date-time with one character changed, reads as the engine reads it', () => {
    const mutated = fc
      .tuple(parts, fc.nat(), fc.string({ unit: 'binary', minLength: 0, maxLength: 2 }))
      .map(([p, at, insert]) => {
        const s = text(p);
        const i = at % s.length;
        return s.slice(0, i) + insert + s.slice(i + 1);
      });
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), mutated), (s) => {
        const ms = dateTimeMs(s);
        if (ms !== undefined) expect(ms, s).toBe(oracle(s));
      }),
      { numRuns: 3000 },
    );
  });

  it.each([
    ['2030-01-01T00:00:00+24:00', 'offset'],
    ['2030-01-01T00:00:00+12:60', 'offset'],
    ['2030-01-01T00:00:00-25:00', 'offset'],
    ['2030-01-01T00:00:00+2400', 'RFC 3339'],
    ['2030-01-01T00:00:00-0800', 'RFC 3339'],
    ['9999-12-31T23:59:59-00:01', '0000 to 9999'],
    ['0000-01-01T00:00:00+00:01', '0000 to 9999'],
  ])('refuses %s in a request body, naming the field', (expiresAt, why) => {
    const parsed = NewApiKey.safeParse({ plan: 'pro', expiresAt });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(['expiresAt']);
    expect(parsed.error?.issues[0]?.message).toMatch(/^expiresAt /);
    expect(parsed.error?.issues[0]?.message).toContain(why);
  });

  it.each([
    '2030-01-01T00:00:00Z',
    '2030-01-01t00:00:00z',
    '2030-01-01T00:00:00+23:59',
    '2030-06-30T12:00:00.123456789-08:00',
  ])('accepts %s', (expiresAt) => {
    expect(NewApiKey.safeParse({ plan: 'pro', expiresAt }).success).toBe(true);
  });
});
