import { z } from 'zod';
import { PlanName, Scope } from './keys.js';
import { decimalParam, openApi, PAGE_LIMIT } from './schemas.js';

/** Largest per-minute or per-day limit a key can carry (a 32-bit database integer). */
export const MAX_KEY_LIMIT = 2_147_483_647;
/** Key names are at most this many characters. */
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

const name = openApi(
  z
    .string({ invalid_type_error: 'name must be a string' })
    .min(1, 'name must not be empty')
    .max(KEY_NAME_MAX_LENGTH, `name must be at most ${KEY_NAME_MAX_LENGTH} characters`),
  {},
);

const scopes = openApi(
  z
    .array(Scope, { invalid_type_error: 'scopes must be an array' })
    .min(1, 'scopes must name at least one scope')
    .refine((list) => new Set(list).size === list.length, 'scopes must not repeat a scope'),
  { uniqueItems: true },
);

const dateTime = (field: string) =>
  openApi(
    z
      .string({ invalid_type_error: `${field} must be a date-time string` })
      .datetime({ offset: true, message: `${field} must be an RFC 3339 date-time, e.g. 2030-01-01T00:00:00Z` }),
    {
      format: 'date-time',
    },
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
      expiresAt: dateTime('expiresAt').optional(),
    })
    .strict(),
  { title: 'NewApiKey' },
);
export type NewApiKey = z.infer<typeof NewApiKey>;

/** Body of `PATCH /admin/v1/keys/{id}`: the fields to change (`null` clears a name or an expiry). */
export const ApiKeyChanges = openApi(
  z
    .object({
      name: name.nullable().optional(),
      scopes: scopes.optional(),
      perMinute: limit('perMinute').optional(),
      perDay: limit('perDay').optional(),
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
    createdAt: dateTime('createdAt'),
    expiresAt: dateTime('expiresAt').nullable(),
    revokedAt: dateTime('revokedAt').nullable(),
    lastUsedAt: openApi(dateTime('lastUsedAt').nullable(), { description: 'Last accepted request, to the minute.' }),
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

/** One window of a key's usage now; `reset` is Unix seconds. */
export const UsageWindow = openApi(
  z.object({
    limit: z.number().int(),
    used: z.number().int(),
    remaining: z.number().int(),
    reset: z.number().int(),
  }),
  { title: 'UsageWindow' },
);

/** Answer of `GET /admin/v1/keys/{id}/usage`. Counters are shared by every key of a rotation lineage. */
export const ApiKeyUsage = openApi(
  z.object({
    plan: PlanName,
    minute: UsageWindow,
    day: UsageWindow,
    bannedUntil: dateTime('bannedUntil').nullable(),
  }),
  { title: 'ApiKeyUsage' },
);
export type ApiKeyUsage = z.infer<typeof ApiKeyUsage>;

export const ListApiKeysQuery = z.object({
  limit: decimalParam('limit', PAGE_LIMIT.min, PAGE_LIMIT.max, { default: PAGE_LIMIT.default }).optional(),
  cursor: z
    .string({ invalid_type_error: 'cursor must be a single string' })
    .min(1, 'cursor must not be empty')
    .max(200, 'cursor is not valid')
    .optional(),
});
export type ListApiKeysQuery = z.infer<typeof ListApiKeysQuery>;

export const ApiKeyIdParams = z.object({
  id: decimalParam('id', 1, MAX_KEY_LIMIT, { format: 'int32' }),
});
