import type { ListPetsOptions, PetStore, ReadStats } from './types.js';

/**
 * The two reads on every client's hot path (list and get) as SQL, for the readers of both drivers (statements prepared
 * once on SQLite, unnamed ones on PostgreSQL). Prisma's per-query work was the largest cost of a read (see
 * BENCHMARKS.md); writes and keys stay with Prisma. Same rows, same order, same int64 rule as the Prisma path (a test
 * holds them to the same answers).
 */
export type PetReads = Pick<PetStore, 'list' | 'get'> & { stats(): ReadStats };

/** Columns in the order the row tuples of pet-rows.ts expect. */
const PET_COLUMNS = 'SELECT "id", "name", "categoryId", "status" FROM "Pet"';
const listSql = (select: string, statusIdIndex = '', p = '?') => ({
  all: `${select} ORDER BY "id" ASC LIMIT ${p}`,
  byStatus: `${select} WHERE "status" = ${p} ORDER BY "id" ASC LIMIT ${p}`,
  after: `${select} WHERE "id" > ${p} ORDER BY "id" ASC LIMIT ${p}`,
  byStatusAfter: `${select}${statusIdIndex} WHERE "status" = ${p} AND "id" > ${p} ORDER BY "id" ASC LIMIT ${p}`,
});
export const LIST_SQL = listSql(PET_COLUMNS);
export type ListKind = keyof typeof LIST_SQL;

/**
 * SQLite's planner takes the rowid range (`id > ?`) for a status and a cursor, filtering the status row by row: on
 * 50,000 pets a rare status after an early cursor scanned 40,000 rows (18 ms against 0.8 ms through the index, measured
 * in BENCHMARKS.md). The `(status, id)` index answers it in O(page) whatever the catalogue, so SQLite is told to use it.
 */
const SQLITE_STATUS_ID_INDEX = ' INDEXED BY "Pet_status_id_idx"';
/**
 * A parameter of a statement SQLite runs again and again, written `+?`: the planner then does not read the value bound
 * to it (the plan is the same, the parameter's meaning too: a bare `?` has no affinity either). A bare `?` in `LIMIT`,
 * and, once `ANALYZE` (or `PRAGMA optimize`) has stored index samples, in `"status" = ?` or `"id" > ?`, makes SQLite
 * mark the statement to be compiled again whenever that parameter is bound, which better-sqlite3 does on every run.
 * So every list page parsed and planned its statement anew: `sqlite3Reprepare` was 6 % of the server's CPU on varied
 * pages (perf, CPU time; BENCHMARKS.md, sixth session).
 */
const SQLITE_PARAM = '+?';
export const SQLITE_LIST_SQL = listSql(PET_COLUMNS, SQLITE_STATUS_ID_INDEX, SQLITE_PARAM) satisfies Record<
  ListKind,
  string
>;
/** The same pages as ids only (answered from the indexes alone): see sqlite-reads.ts. */
export const SQLITE_LIST_IDS_SQL = listSql(
  'SELECT "id" FROM "Pet"',
  SQLITE_STATUS_ID_INDEX,
  SQLITE_PARAM,
) satisfies Record<ListKind, string>;
export const GET_SQL = `${PET_COLUMNS} WHERE "id" = ?`;

/**
 * Which list statement reads the page of these options, with its parameters in order. It reads one pet more than the
 * page's limit: that row tells whether more follow, without a COUNT (see pet-page.ts). `id` converts the cursor id to
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

/** `?` placeholders as PostgreSQL's `$1`, `$2`, ... */
export const numbered = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};
