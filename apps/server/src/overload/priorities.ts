import { PLAN_NAMES, type PlanName } from '@animal-store/contract';

/** A request's plan for shedding: its key's, or `none` without a valid key (those go first). */
export type ShedPlan = PlanName | 'none';

/**
 * The priority class of a request (pressure.ts sheds the lowest first): requests without a valid key 0, then the
 * plans in their order (free 1 ... enterprise 4). A create is half a class above a read of its plan: within a plan,
 * reads (often polling and batch work, and cheap to repeat) go before creates, which carry a user's intent and come
 * back with their Idempotency-Key if shed.
 */
export function priorityClass(plan: ShedPlan, method: string): number {
  return (plan === 'none' ? 0 : PLAN_NAMES.indexOf(plan) + 1) + (method === 'POST' ? 0.5 : 0);
}

/** The shed level from which everything that may be shed is shed, before its key is looked at. */
export const HARD_LEVEL = PLAN_NAMES.length + 1;

/**
 * Half-class slots of the per-class counts (admission's shed debt and offered traffic, the monitor's spread of it):
 * classes 0 to HARD_LEVEL + 0.5.
 */
export const CLASS_SLOTS = 2 * HARD_LEVEL + 2;

/** Paths never shed: the probes and the scrape, which must answer under load, and the operators' admin API. */
const NEVER_SHED = ['/healthz', '/readyz', '/metrics'];
const ADMIN_PREFIX = '/admin/v1';

/** True for a request that is never shed (`url` as on the request line: path and query). */
export function neverShed(url: string): boolean {
  const end = url.indexOf('?');
  const path = end === -1 ? url : url.slice(0, end);
  if (NEVER_SHED.includes(path)) return true;
  return path === ADMIN_PREFIX || path.startsWith(`${ADMIN_PREFIX}/`);
}
