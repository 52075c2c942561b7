import { z } from 'zod';
import { cursorParam } from './cursor.js';
import { openApi, type OpenApiMeta } from './openapi-meta.js';
import { nameRuleDescription, nameText } from './text.js';
import { lean } from './lean-effects.js';

export { openApi, type OpenApiMeta } from './openapi-meta.js';

/** Largest integer JSON numbers carry exactly (2^53 - 1). Larger int64 values are refused, never rounded. */
export const MAX_SAFE_ID = Number.MAX_SAFE_INTEGER;
/** `name` is at most this many Unicode code points. */
export const NAME_MAX_LENGTH = 255;
/** Page size rules of GET /pets. */
export const PAGE_LIMIT = { min: 1, max: 100, default: 20 } as const;

const DECIMAL = /^(0|[1-9][0-9]*)$/;

/** Turns a plain decimal string ("42") into a number; anything else ("1e2", " 4", "0x1", arrays) is left as is to fail. */
function strictDecimal(value: unknown): unknown {
  if (typeof value === 'string' && DECIMAL.test(value) && value.length <= 16) return Number(value);
  return value;
}

/**
 * An integer query or path parameter written as a plain decimal string. The declared input type is `number`
 * (what a typed client sends: ts-rest serialises it into the URL); the server receives the string form.
 */
export function decimalParam(name: string, min: number, max: number, meta: OpenApiMeta = {}) {
  const message = `${name} must be an integer from ${min} to ${max}`;
  const inner = z
    .number({ invalid_type_error: message, required_error: `${name} is required` })
    .int(message)
    .min(min, message)
    .max(max, message);
  return openApi(lean(z.preprocess(strictDecimal, inner)), {
    type: 'integer',
    minimum: min,
    maximum: max,
    ...meta,
  }) as unknown as z.ZodType<number, z.ZodTypeDef, number>;
}

const int64Id = (name: string) =>
  openApi(
    z
      .number({ invalid_type_error: `${name} must be an integer`, required_error: `${name} is required` })
      .int(`${name} must be an integer`)
      .min(1, `${name} must be a positive integer`)
      .max(MAX_SAFE_ID, `${name} must be at most ${MAX_SAFE_ID}`),
    { format: 'int64' },
  );

export const PetStatus = z.enum(['available', 'pending', 'sold'], {
  errorMap: () => ({ message: 'status must be one of available, pending, sold' }),
});
export type PetStatus = z.infer<typeof PetStatus>;

export const PetName = openApi(nameText('name', NAME_MAX_LENGTH), {
  minLength: 1,
  maxLength: NAME_MAX_LENGTH,
  description: nameRuleDescription(NAME_MAX_LENGTH),
});

/** Request body of createPet. Unknown fields (a client-sent `id` included) are ignored. */
export const NewPet = openApi(
  z.object({
    name: PetName,
    categoryId: int64Id('categoryId'),
    status: PetStatus.optional(),
  }),
  { title: 'NewPet' },
);
export type NewPet = z.infer<typeof NewPet>;

export const Pet = openApi(NewPet.extend({ id: int64Id('id') }), { title: 'Pet' });
export type Pet = z.infer<typeof Pet>;

export const Pets = openApi(z.array(Pet), { title: 'Pets' });
export type Pets = z.infer<typeof Pets>;

/** Query of listPets. `cursor` is opaque: take it from the `Link: rel="next"` header, never build it. */
export const ListPetsQuery = z.object({
  limit: decimalParam('limit', PAGE_LIMIT.min, PAGE_LIMIT.max, { default: PAGE_LIMIT.default }).optional(),
  status: PetStatus.optional(),
  cursor: cursorParam(MAX_SAFE_ID).optional(),
});
export type ListPetsQuery = z.infer<typeof ListPetsQuery>;

export const PetIdParams = z.object({
  petId: decimalParam('petId', 1, MAX_SAFE_ID, { format: 'int64' }),
});

/** `Idempotency-Key` values: 1 to 255 printable ASCII characters (a random UUID is recommended). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/**
 * Request headers of createPet. `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header) makes the create safe
 * to retry: the same key with the same body gets the first answer again; see the operation's description.
 */
export const CreatePetHeaders = z.object({
  'idempotency-key': openApi(
    z
      .string({ invalid_type_error: 'Idempotency-Key must be sent once' })
      .regex(IDEMPOTENCY_KEY_PATTERN, 'Idempotency-Key must be 1 to 255 printable ASCII characters'),
    {
      description:
        'Makes the create safe to retry: a random UUID per animal, the same on every retry of it. Scoped to the API key; ' +
        'kept at least 24 hours. The same key with another body is refused (422), while its first request is in progress 409.',
      example: '8e03978e-40d5-43e8-bc93-6894a57f9324',
    },
  ).optional(),
});
export type CreatePetHeaders = z.infer<typeof CreatePetHeaders>;
