import type { WindowLimit } from './types.js';

/** One minute in milliseconds. */
export const MINUTE_MS = 60_000;
/** One (UTC) day in milliseconds. */
export const DAY_MS = 86_400_000;

/** A clock minute's and a UTC day's window (named `minute` and `day`), in that order: the pair most APIs publish. */
export function minuteAndDay(limits: { readonly perMinute: number; readonly perDay: number }): WindowLimit[] {
  return [
    { name: 'minute', limit: limits.perMinute, windowMs: MINUTE_MS },
    { name: 'day', limit: limits.perDay, windowMs: DAY_MS },
  ];
}
