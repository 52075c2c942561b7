import type { ListPetsOptions } from '../types.js';
import { NEW_PET_FIELDS, PET_FIELDS } from './fields.js';

/**
 * The SQL both drivers share: the Pet's columns (from fields.ts) and the two reads on every client's hot path, list
 * and get (statements prepared once on SQLite, unnamed ones on PostgreSQL). Same rows and same order on both.
 */

/** A column's name in SQL (the same on both drivers). */
export const column = (name: string) => `"${name}"`;
/** Every column of a Pet, in the order rows.ts reads a row in. */
export const PET_COLUMNS = PET_FIELDS.map((f) => column(f.name)).join(', ');
/** The columns a create inserts (all but the id the database assigns). */
export const NEW_PET_COLUMNS = NEW_PET_FIELDS.map((f) => column(f.name)).join(', ');
export const PET_SELECT = `SELECT ${PET_COLUMNS} FROM "Pet"`;

/** The four list statements of a select, with `p` as the parameter and `statusIdIndex` as a hint after the table. */
export const listSql = (select: string, statusIdIndex = '', p = '?') => ({
  all: `${select} ORDER BY "id" ASC LIMIT ${p}`,
  byStatus: `${select} WHERE "status" = ${p} ORDER BY "id" ASC LIMIT ${p}`,
  after: `${select} WHERE "id" > ${p} ORDER BY "id" ASC LIMIT ${p}`,
  byStatusAfter: `${select}${statusIdIndex} WHERE "status" = ${p} AND "id" > ${p} ORDER BY "id" ASC LIMIT ${p}`,
});
export const LIST_SQL = listSql(PET_SELECT);
export type ListKind = keyof typeof LIST_SQL;
export const GET_SQL = `${PET_SELECT} WHERE "id" = ?`;

/**
 * Which list statement reads the page of these options, with its parameters in order. It reads one pet more than the
 * page's limit: that row tells whether more follow, without a COUNT (see page.ts). `id` converts the cursor id to
 * what the driver binds exactly as int64 (a bigint for better-sqlite3, decimal text for pg).
 */
export function listStatement(
  { limit, status, afterId }: ListPetsOptions,
  id: (value: number) => unknown,
): [ListKind, unknown[]] {
  const rows = limit + 1;
  if (status === undefined) return afterId === undefined ? ['all', [rows]] : ['after', [id(afterId), rows]];
  return afterId === undefined ? ['byStatus', [status, rows]] : ['byStatusAfter', [status, id(afterId), rows]];
}

/** One key per distinct page: what the page cache and a PostgreSQL batch of pages tell pages apart by. */
export const pageKey = ({ limit, status, afterId }: ListPetsOptions) => `${limit}|${status ?? ''}|${afterId ?? ''}`;
