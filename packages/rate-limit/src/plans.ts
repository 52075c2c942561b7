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

/** Every plan, in order: the self-service ones of {@link PLAN_LIMITS}, then enterprise (limits set per key). */
export const PLANS = ['free', 'pro', 'business', 'enterprise'] as const satisfies ReadonlyArray<
  keyof typeof PLAN_LIMITS | 'enterprise'
>;
export type Plan = (typeof PLANS)[number];

export function isPlan(value: string): value is Plan {
  return (PLANS as readonly string[]).includes(value);
}

/** Per-key overrides; only used for the `enterprise` plan. `null`/`undefined` means "not set". */
export interface CustomLimits {
  readonly perMinute?: number | null;
  readonly perDay?: number | null;
}

/**
 * The rule for a new key's own limits, or undefined when `custom` is acceptable for `plan`: enterprise keys need both
 * values (whole numbers >= 1); the other plans' limits are fixed, so they take none. Keys are checked with this when
 * they are made; {@link limitsForPlan} stays lenient with what is stored.
 */
export function customLimitsProblem(plan: Plan, custom: CustomLimits = {}): string | undefined {
  const given = [custom.perMinute, custom.perDay].filter(
    (value): value is number => value !== null && value !== undefined,
  );
  if (plan !== 'enterprise') {
    return given.length > 0
      ? 'per-minute and per-day limits are set by the plan; custom values are for enterprise keys'
      : undefined;
  }
  if (given.length < 2) return 'enterprise keys need their own per-minute and per-day limits';
  if (!given.every((value) => Number.isSafeInteger(value) && value >= 1))
    return 'custom limits must be whole numbers from 1';
  return undefined;
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
