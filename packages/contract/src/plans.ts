import { z } from 'zod';

/** The plans a key can be on, in order: the self-service ones of {@link PLAN_LIMITS}, then enterprise (own limits). */
export const PLAN_NAMES = ['free', 'pro', 'business', 'enterprise'] as const;
export const PlanName = z.enum(PLAN_NAMES, {
  errorMap: () => ({ message: `plan must be one of ${PLAN_NAMES.join(', ')}` }),
});
export type PlanName = z.infer<typeof PlanName>;

/** Per-minute and per-day quotas of a plan, and how many requests of one key (its lineage) may be in flight at once. */
export interface PlanQuota {
  readonly perMinute: number;
  readonly perDay: number;
  readonly concurrentRequests: number;
}

/** Fixed quotas of the self-service plans. Enterprise keys carry their own (see {@link planQuota}). */
export const PLAN_LIMITS = Object.freeze({
  free: Object.freeze({ perMinute: 60, perDay: 1_000, concurrentRequests: 5 }),
  pro: Object.freeze({ perMinute: 300, perDay: 10_000, concurrentRequests: 20 }),
  business: Object.freeze({ perMinute: 1_000, perDay: 100_000, concurrentRequests: 50 }),
} as const satisfies Record<Exclude<PlanName, 'enterprise'>, PlanQuota>);

export function isPlan(value: string): value is PlanName {
  return (PLAN_NAMES as readonly string[]).includes(value);
}

/** A key's own limits; only an `enterprise` key's count. `null`/`undefined` means "not set". */
export interface CustomLimits {
  readonly perMinute?: number | null | undefined;
  readonly perDay?: number | null | undefined;
  readonly concurrentRequests?: number | null | undefined;
}

const isSet = (value: number | null | undefined): value is number => value !== null && value !== undefined;

/**
 * The rule for a new key's own limits, or undefined when `custom` is acceptable for `plan`: enterprise keys need a
 * per-minute and a per-day limit (per minute at most per day) and may set their concurrent requests, all whole numbers
 * >= 1; the other plans' limits are fixed, so they take none. Keys are checked with this when they are made;
 * {@link planQuota} stays lenient with what is stored.
 */
export function customLimitsProblem(plan: PlanName, custom: CustomLimits = {}): string | undefined {
  const given = [custom.perMinute, custom.perDay, custom.concurrentRequests].filter(isSet);
  if (plan !== 'enterprise') {
    return given.length > 0
      ? 'per-minute, per-day and concurrent-request limits are set by the plan; custom values are for enterprise keys'
      : undefined;
  }
  if (!isSet(custom.perMinute) || !isSet(custom.perDay))
    return 'enterprise keys need their own per-minute and per-day limits';
  if (!given.every((value) => Number.isSafeInteger(value) && value >= 1))
    return 'custom limits must be whole numbers from 1';
  const { perMinute, perDay } = custom;
  if (perMinute > perDay) return `perMinute (${perMinute}) must not exceed perDay (${perDay}): a day holds the minutes`;
  return undefined;
}

/**
 * The quota in force for a key of `plan`: the plan's ({@link PLAN_LIMITS}; `custom` is ignored), or for `enterprise`
 * the key's own, where a missing (`null`/`undefined`) value falls back to the business plan's value of that limit.
 *
 * @throws {RangeError} for an unknown plan or a custom value that is not an integer >= 0.
 */
export function planQuota(plan: PlanName, custom?: CustomLimits | null): PlanQuota {
  if (plan === 'enterprise') {
    const fallback = PLAN_LIMITS.business;
    return {
      perMinute: customValue('perMinute', custom?.perMinute, fallback.perMinute),
      perDay: customValue('perDay', custom?.perDay, fallback.perDay),
      concurrentRequests: customValue('concurrentRequests', custom?.concurrentRequests, fallback.concurrentRequests),
    };
  }
  if (!Object.prototype.hasOwnProperty.call(PLAN_LIMITS, plan)) throw new RangeError(`Unknown plan: ${String(plan)}`);
  return PLAN_LIMITS[plan];
}

function customValue(field: string, value: number | null | undefined, fallback: number): number {
  if (value === null || value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`Invalid enterprise ${field} limit: ${String(value)}`);
  }
  return value;
}
