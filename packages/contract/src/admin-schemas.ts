import { z } from 'zod';
import { Scope } from './keys.js';
import { planWindows, windowNow } from './windows-now.js';
import { PlanName } from './plans.js';
import { cursorParam } from './cursor.js';
import { dateTime } from './date-time.js';
import { decimalParam, openApi, PAGE_LIMIT } from './schemas.js';
import { nameRuleDescription, nameText } from './text.js';

/** Largest per-minute or per-day limit a key can carry (a 32-bit database integer). */
export const MAX_KEY_LIMIT = 2_147_483_647;
/** Largest API key id (a 32-bit database integer): larger ids in paths and cursors are refused before any query. */
export const MAX_KEY_ID = 2_147_483_647;
/** Key names are at most this many characters (code points), under the same rule as pet names. */
export const KEY_NAME_MAX_LENGTH = 200;
/** Default and largest overlap of a rotation: the old key keeps working this long after it. */
export const ROTATION_OVERLAP_SECONDS = { default: 86_400, max: 30 * 86_400 } as const;

const limit = (name: string) =>
  openApi(
    z
      .number({ invalid_type_error: `${name} must be an integer`, required_error: `${name} is required` })
      .int(`${name} must be an integer`)
      .min(1, `${name} must be at least 1`)
      .max(MAX_KEY_LIMIT, `${name} must be at most ${MAX_KEY_LIMIT}`),
    { format: 'int32' },
  );

const name = openApi(nameText('name', KEY_NAME_MAX_LENGTH), {
  minLength: 1,
  maxLength: KEY_NAME_MAX_LENGTH,
  description: nameRuleDescription(KEY_NAME_MAX_LENGTH),
});

const scopes = openApi(
  z
    .array(Scope, { invalid_type_error: 'scopes must be an array' })
    .min(1, 'scopes must name at least one scope')
    .refine((list) => new Set(list).size === list.length, 'scopes must not repeat a scope'),
  { uniqueItems: true },
);

/** Body of `POST /admin/v1/keys`. Unknown fields are refused: a misspelt `scope` must not yield a key with every scope. */
export const NewApiKey = openApi(
  z
    .object({
      plan: PlanName,
      name: name.optional(),
      scopes: scopes.optional(),
      perMinute: limit('perMinute').optional(),
      perDay: limit('perDay').optional(),
      concurrentRequests: limit('concurrentRequests').optional(),
      expiresAt: dateTime('expiresAt').optional(),
    })
    .strict(),
  { title: 'NewApiKey' },
);
export type NewApiKey = z.infer<typeof NewApiKey>;

/** Body of `PATCH /admin/v1/keys/{id}`: the fields to change (`null` clears a name, an expiry or own concurrent requests). */
export const ApiKeyChanges = openApi(
  z
    .object({
      name: name.nullable().optional(),
      scopes: scopes.optional(),
      perMinute: limit('perMinute').optional(),
      perDay: limit('perDay').optional(),
      concurrentRequests: limit('concurrentRequests').nullable().optional(),
      expiresAt: dateTime('expiresAt').nullable().optional(),
    })
    .strict()
    .refine((changes) => Object.keys(changes).length > 0, 'the body must name at least one field to change'),
  { title: 'ApiKeyChanges' },
);
export type ApiKeyChanges = z.infer<typeof ApiKeyChanges>;

/** Body of `POST /admin/v1/keys/{id}/rotate` (may be empty). */
export const RotateApiKey = openApi(
  z
    .object({
      overlapSeconds: z
        .number({ invalid_type_error: 'overlapSeconds must be an integer' })
        .int('overlapSeconds must be an integer')
        .min(0, 'overlapSeconds must be at least 0')
        .max(ROTATION_OVERLAP_SECONDS.max, `overlapSeconds must be at most ${ROTATION_OVERLAP_SECONDS.max}`)
        .optional(),
    })
    .strict(),
  { title: 'RotateApiKey' },
);
export type RotateApiKey = z.infer<typeof RotateApiKey>;

/** A key as the admin API shows it: never its secret. Limits are the effective ones (the plan's unless enterprise). */
export const ApiKey = openApi(
  z.object({
    id: z.number().int(),
    name: z.string().nullable(),
    prefix: openApi(z.string(), {
      description: 'The first characters of the raw key (`ask_` + 8), to tell keys apart.',
    }),
    plan: PlanName,
    scopes: z.array(Scope),
    perMinute: z.number().int(),
    perDay: z.number().int(),
    concurrentRequests: openApi(z.number().int(), {
      description: 'Requests of this key (with its rotation lineage) allowed in flight at once; more get 429.',
    }),
    createdAt: dateTime('createdAt'),
    expiresAt: dateTime('expiresAt').nullable(),
    revokedAt: dateTime('revokedAt').nullable(),
    lastUsedAt: openApi(dateTime('lastUsedAt').nullable(), { description: 'Last accepted request, to the minute.' }),
    lastDeprecatedCallAt: openApi(dateTime('lastDeprecatedCallAt').nullable(), {
      description: 'Last accepted call of a deprecated operation (e.g. getPet), to the minute: who still has to move.',
    }),
  }),
  { title: 'ApiKey' },
);
export type ApiKey = z.infer<typeof ApiKey>;

export const ApiKeys = openApi(z.array(ApiKey), { title: 'ApiKeys' });

/** Answer of create and rotate: the key and its raw secret, shown this once and never again. */
export const CreatedApiKey = openApi(
  z.object({
    key: ApiKey,
    secret: openApi(z.string(), { description: 'The raw API key (`ask_...`). Store it now: it is never shown again.' }),
  }),
  { title: 'CreatedApiKey' },
);
export type CreatedApiKey = z.infer<typeof CreatedApiKey>;

/** One window of a key's usage now. */
export const UsageWindow = windowNow('UsageWindow', { used: z.number().int() });

/** Answer of `GET /admin/v1/keys/{id}/usage`. Counters are shared by every key of a rotation lineage. */
export const ApiKeyUsage = planWindows('ApiKeyUsage', UsageWindow, { bannedUntil: dateTime('bannedUntil').nullable() });
export type ApiKeyUsage = z.infer<typeof ApiKeyUsage>;

export const ListApiKeysQuery = z.object({
  limit: decimalParam('limit', PAGE_LIMIT.min, PAGE_LIMIT.max, { default: PAGE_LIMIT.default }).optional(),
  cursor: cursorParam(MAX_KEY_ID).optional(),
});
export type ListApiKeysQuery = z.infer<typeof ListApiKeysQuery>;

export const ApiKeyIdParams = z.object({
  id: decimalParam('id', 1, MAX_KEY_ID, { format: 'int32' }),
});
