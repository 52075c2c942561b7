// The shapes of a caller's windows now, shared by `GET /v1/rate_limit` and the admin API's usage (not exported by
// the package: each answer's schema is).
import { z } from 'zod';
import { PlanName } from './plans.js';
import { openApi } from './openapi-meta.js';

/**
 * One window now, as `GET /v1/rate_limit` and the admin API's usage show it: its limit, `extra` fields (the admin's
 * `used`), what is left and its reset in Unix seconds, as in `X-RateLimit-Reset`.
 */
export const windowNow = <Extra extends z.ZodRawShape>(title: string, extra: Extra) =>
  openApi(z.object({ limit: z.number().int(), ...extra, remaining: z.number().int(), reset: z.number().int() }), {
    title,
  });

/** A plan and both its windows now (the minute and the UTC day), in `window`'s shape, then `extra` fields. */
export const planWindows = <Window extends z.ZodTypeAny, Extra extends z.ZodRawShape>(
  title: string,
  window: Window,
  extra: Extra,
) => openApi(z.object({ plan: PlanName, minute: window, day: window, ...extra }), { title });
