import { NewPet } from '@animal-store/contract';
import type { z } from 'zod';

/**
 * Values a test can send for every field of NewPet, found from the contract's schema itself (its shape iterated, each
 * candidate tried against the field's own rules), so a field declared tomorrow is covered without editing a test.
 * Text candidates carry what JSON escapes or keeps (quotes, backslash, non-ASCII, U+2028); numbers include 2^53-1.
 */
const CANDIDATES: unknown[] = [`Ünï "q" \\ / é 🐾 \u2028 end`, 'x', 9007199254740991, 1, 2, true, false];

type Shape = typeof NewPet.shape;
export type FieldName = Extract<keyof Shape, string>;

/** The values field `name` accepts, first the most demanding; every value of an enum. */
export function samplesOf(name: FieldName): unknown[] {
  const schema: z.ZodTypeAny = NewPet.shape[name];
  let inner = schema;
  while (inner._def.innerType !== undefined) inner = inner._def.innerType as z.ZodTypeAny;
  const options = (inner as Partial<z.ZodEnum<[string, ...string[]]>>).options;
  const accepted = options ?? CANDIDATES.filter((value) => schema.safeParse(value).success);
  if (accepted.length === 0)
    throw new Error(`no sample value for NewPet.${name}: add a candidate in test/pet-samples.ts`);
  return accepted;
}

export const FIELDS = Object.keys(NewPet.shape) as FieldName[];
export const isOptional = (name: FieldName) => NewPet.shape[name].isOptional();

/**
 * NewPets that together send every field with each of its sample values, and without each optional one: the first
 * has every field, the second only the required ones, then one per other sample value of a field.
 */
export function samplePets(): NewPet[] {
  const full = Object.fromEntries(FIELDS.map((name) => [name, samplesOf(name)[0]])) as NewPet;
  const bare = Object.fromEntries(FIELDS.filter((n) => !isOptional(n)).map((n) => [n, full[n]])) as NewPet;
  const variants = FIELDS.flatMap((name) =>
    samplesOf(name)
      .slice(1)
      .map((value) => ({ ...full, [name]: value })),
  );
  return [full, bare, ...variants].map((pet) => NewPet.parse(pet));
}

/** The Pet's JSON as the API sends it: `id` first, then the fields present, in the contract's order. */
export function petJson(id: number, pet: NewPet): string {
  const present = FIELDS.filter((name) => pet[name] !== undefined);
  return JSON.stringify(Object.fromEntries([['id', id], ...present.map((name) => [name, pet[name]])]));
}
