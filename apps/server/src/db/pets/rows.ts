import { MAX_SAFE_ID, type NewPet, type Pet } from '@animal-store/contract';
import { NEW_PET_FIELDS, PET_FIELDS, type PetField } from './fields.js';

/**
 * Pets from rows and rows from pets, field by field as fields.ts declares them, with the int64 rule: a value up to
 * 2^53-1 is a JSON number, exact; beyond, it is refused, never rounded. A Pet is built with its fields in the order of
 * {@link PET_FIELDS}, so `JSON.stringify` of it is the Pet's JSON (what PostgreSQL's builder in postgres/sql.ts makes
 * too, and what a stored idempotent answer holds).
 */

const MAX_ID = BigInt(MAX_SAFE_ID);

const beyond = (f: PetField, value: unknown) =>
  new Error(`Pet.${f.name} ${String(value)} is beyond 2^53-1 and cannot be represented exactly`);

/** int64 as the driver gives it (better-sqlite3 with safeIntegers: bigint; pg: decimal text) -> an exact number. */
function int64Of(f: PetField, value: unknown): number {
  if (typeof value === 'bigint') {
    if (value > MAX_ID || value < -MAX_ID) throw beyond(f, value);
    return Number(value);
  }
  const number = typeof value === 'string' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isSafeInteger(number)) throw beyond(f, value);
  return number;
}

/** The value of field `f` from a column, checked as its kind says. */
function valueOf(f: PetField, value: unknown, pet: Partial<Pet>): unknown {
  if (f.kind === 'int64') return int64Of(f, value);
  if (typeof value !== 'string') throw new Error(`Pet ${pet.id} has a ${f.name} that is not text`);
  if (f.values !== undefined && !f.values.has(value)) throw new Error(`Pet ${pet.id} has an unknown ${f.name}`);
  return value;
}

/**
 * A Pet from a row in {@link PET_FIELDS} order (a raw better-sqlite3 row or a pg row in array mode): NULL leaves an
 * optional field absent.
 */
export function petOfRow(row: readonly unknown[]): Pet {
  const pet: Record<string, unknown> = {};
  for (let i = 0; i < PET_FIELDS.length; i++) {
    const f = PET_FIELDS[i]!;
    const value = row[i];
    if (value === null || value === undefined) {
      if (!f.optional) throw new Error(`Pet ${String(pet['id'])} has no ${f.name}`);
    } else pet[f.name] = valueOf(f, value, pet);
  }
  return pet as Pet;
}

/** The Pet a create made: `pet` under the id the database assigned (its driver's int64). */
export const createdPet = (id: unknown, pet: NewPet): Pet =>
  petOfRow(PET_FIELDS.map((f) => (f.name === 'id' ? id : (pet as Record<string, unknown>)[f.name])));

/**
 * The values a create inserts, in {@link NEW_PET_FIELDS} order: int64 as `int64` makes it (bigint for better-sqlite3,
 * decimal text for pg: exact either way), an absent optional field as NULL.
 */
export function insertValues(pet: NewPet, int64: (value: number) => unknown): unknown[] {
  return NEW_PET_FIELDS.map((f) => {
    const value = (pet as Record<string, unknown>)[f.name];
    if (value === undefined) return null;
    return f.kind === 'int64' ? int64(value as number) : value;
  });
}
