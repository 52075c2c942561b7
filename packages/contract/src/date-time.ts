import { z } from 'zod';
import { openApi } from './openapi-meta.js';
import { lean } from './lean-effects.js';

/**
 * RFC 3339 `date-time` (section 5.6) as this API reads it: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+hh:mm|-hh:mm)`.
 * - `T` and `Z` may be lower case (RFC 3339 allows it); the offset needs its colon (`+0800` is ISO 8601, not RFC 3339).
 * - Offsets up to `±23:59`; `-00:00` reads as UTC.
 * - No leap second (`:60`): JavaScript dates and our databases cannot keep one, so it is refused, never shifted.
 * - At most 9 fraction digits; instants are kept to the millisecond (further digits are dropped).
 * - The instant lies in the years 0000-9999 UTC, so it is written back in the same four-digit form.
 */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/** First and last instants (ms) an accepted date-time may name: 0000-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z. */
export const DATE_TIME_RANGE = { min: -62_167_219_200_000, max: 253_402_300_799_999 } as const;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Why `text` is not an accepted date-time (a phrase to follow the field's name), or the instant it names (ms). */
export function readDateTime(text: string): { ms: number } | { problem: string } {
  const m = DATE_TIME.exec(text);
  if (!m) return { problem: 'must be an RFC 3339 date-time, e.g. 2030-01-01T00:00:00Z' };
  const field = (i: number) => Number(m[i] ?? 0);
  const [year, month, day, hour, minute, second] = [field(1), field(2), field(3), field(4), field(5), field(6)];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month))
    return { problem: 'names a day that does not exist' };
  if (hour > 23 || minute > 59) return { problem: 'has an hour or minute out of range' };
  if (second > 59) return { problem: 'must not name a leap second (seconds 00-59)' };
  const [offsetHours, offsetMinutes] = [field(9), field(10)];
  if (offsetHours > 23 || offsetMinutes > 59) return { problem: 'has an offset out of range (from -23:59 to +23:59)' };
  const millis = Number((m[7] ?? '').slice(0, 3).padEnd(3, '0'));
  const local = new Date(0).setUTCFullYear(year, month - 1, day) + ((hour * 60 + minute) * 60 + second) * 1000;
  const sign = m[8] === '-' ? -1 : 1;
  const ms = local + millis - sign * (offsetHours * 60 + offsetMinutes) * 60_000;
  if (ms < DATE_TIME_RANGE.min || ms > DATE_TIME_RANGE.max)
    return { problem: 'must lie in the years 0000 to 9999 UTC' };
  return { ms };
}

/** The instant (ms) an accepted date-time names; undefined for anything the rule refuses. */
export function dateTimeMs(text: string): number | undefined {
  const read = readDateTime(text);
  return 'ms' in read ? read.ms : undefined;
}

/** A date-time field of a request or an answer, following {@link readDateTime}'s rule. */
export function dateTime(field: string) {
  return openApi(
    lean(
      z.string({ invalid_type_error: `${field} must be a date-time string` }).superRefine((text, ctx) => {
        const read = readDateTime(text);
        if ('problem' in read) ctx.addIssue({ code: z.ZodIssueCode.custom, message: `${field} ${read.problem}` });
      }),
    ),
    {
      format: 'date-time',
      description:
        'RFC 3339, e.g. `2030-01-01T00:00:00Z`; offsets up to ±23:59 with a colon; no leap second; years 0000-9999.',
    },
  );
}
