import { MAX_SAFE_ID, PetStatus, type Pet } from '@animal-store/contract';

/** Pet rows as the drivers return them, mapped to the contract's Pet with the int64 rule: exact, or refused. */

const MAX_ID = BigInt(MAX_SAFE_ID);
const MIN_ID = -MAX_ID;

/** int64 from the database -> JSON number; values beyond 2^53-1 cannot be sent exactly and are never rounded. */
function toSafeNumber(value: bigint, field: string): number {
  if (value > MAX_ID || value < MIN_ID) {
    throw new Error(`${field} ${value} is beyond 2^53-1 and cannot be represented exactly`);
  }
  return Number(value);
}

/** int8 as decimal text (pg): converted directly, and refused (never rounded) beyond 2^53-1, like toSafeNumber. */
function pgSafeNumber(text: string, field: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value))
    throw new Error(`${field} ${text} is beyond 2^53-1 and cannot be represented exactly`);
  return value;
}

const STATUSES: ReadonlySet<string> = new Set(PetStatus.options);

/** A pet from checked column values; `status` must be one of the contract's (same rule as PetStatus.parse, no zod per row). */
export function petOf(id: number, name: string, categoryId: number, status: string | null): Pet {
  const pet: Pet = { id, name, categoryId };
  if (status !== null) {
    if (!STATUSES.has(status)) throw new Error(`Pet ${id} has an unknown status`);
    pet.status = status as PetStatus;
  }
  return pet;
}

/** The columns Prisma selects for a Pet. */
export const petSelect = { id: true, name: true, categoryId: true, status: true } as const;

/** A row from Prisma (int64 as bigint). */
export type PetRow = { id: bigint; name: string; categoryId: bigint; status: string | null };
export const fromPrisma = (row: PetRow): Pet =>
  petOf(toSafeNumber(row.id, 'Pet.id'), row.name, toSafeNumber(row.categoryId, 'Pet.categoryId'), row.status);

/** A row as an array in PET_COLUMNS order (better-sqlite3 raw, int64 as bigint): cheaper than an object per row. */
export type SqlitePetTuple = [id: bigint, name: string, categoryId: bigint, status: string | null];
export const fromSqlite = (row: SqlitePetTuple): Pet =>
  petOf(toSafeNumber(row[0], 'Pet.id'), row[1], toSafeNumber(row[2], 'Pet.categoryId'), row[3]);

/** A row as an array in PET_COLUMNS order (pg rowMode 'array', int8 as text). */
export type PgPetTuple = [id: string, name: string, categoryId: string, status: string | null];
export const fromPg = (row: PgPetTuple): Pet =>
  petOf(pgSafeNumber(row[0], 'Pet.id'), row[1], pgSafeNumber(row[2], 'Pet.categoryId'), row[3]);
