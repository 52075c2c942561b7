import type { WindowLimit } from './types.js';

/** One minute in milliseconds. */
export const MINUTE_MS = 60_000;
/** One (UTC) day in milliseconds. */
export const DAY_MS = 86_400_000;

/** Per-minute and per-day quotas of a plan. */
export interface PlanQuota {
  readonly perMinute: number;
  readonly perDay: number;
}

/** Fixed quotas of the self-service plans. Enterprise keys carry their own (see {@link limitsForPlan}). */
export const PLAN_LIMITS = Object.freeze({
  free: Object.freeze({ perMinute: 60, perDay: 1_000 }),
  pro: Object.freeze({ perMinute: 300, perDay: 10_000 }),
  business: Object.freeze({ perMinute: 1_000, perDay: 100_000 }),
} as const satisfies Record<string, PlanQuota>);

/** Plans known to the limiter. */
export type Plan = keyof typeof PLAN_LIMITS | 'enterprise';

/** Per-key overrides; only used for the `enterprise` plan. `null`/`undefined` means "not set". */
export interface CustomLimits {
  readonly perMinute?: number | null;
  readonly perDay?: number | null;
}

/**
 * Builds the two windows (`"minute"`, then `"day"`) for a plan.
 *
 * - `free` / `pro` / `business`: the values of {@link PLAN_LIMITS}; `custom` is ignored.
 * - `enterprise`: `custom.perMinute` / `custom.perDay`; a missing (`null`/`undefined`)
 *   value falls back to the **business** value of that window (1 000/min, 100 000/day).
 *
 * @throws {RangeError} for an unknown plan or a custom value that is not an integer >= 0.
 */
export function limitsForPlan(plan: Plan, custom?: CustomLimits | null): WindowLimit[] {
  let quota: PlanQuota;
  if (plan === 'enterprise') {
    const fallback = PLAN_LIMITS.business;
    quota = {
      perMinute: customValue('perMinute', custom?.perMinute, fallback.perMinute),
      perDay: customValue('perDay', custom?.perDay, fallback.perDay),
    };
  } else if (Object.prototype.hasOwnProperty.call(PLAN_LIMITS, plan)) {
    quota = PLAN_LIMITS[plan];
  } else {
    throw new RangeError(`Unknown plan: ${String(plan)}`);
  }
  return [
    { name: 'minute', limit: quota.perMinute, windowMs: MINUTE_MS },
    { name: 'day', limit: quota.perDay, windowMs: DAY_MS },
  ];
}

function customValue(field: string, value: number | null | undefined, fallback: number): number {
  if (value === null || value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`Invalid enterprise ${field} limit: ${String(value)}`);
  }
  return value;
}
