import { MAX_SAFE_ID, PetStatus, type Pet } from '@animal-store/contract';
import type pg from 'pg';
import { DatabaseBusyError } from './busy-error.js';
import { groupCommit, type Settled } from './group-commit.js';
import { pageOfPets, petPage, petsOf, type PetPage } from './pet-page.js';
import { fromPg, type PgPetTuple } from './pet-rows.js';
import { GET_SQL, LIST_SQL, listStatement, numbered, pageKey, type PetReads } from './pet-sql.js';
import type { ListPetsOptions } from './types.js';

export interface PostgresReadOptions {
  /**
   * List pages (and gets) asked for together are read by one query (default true). See {@link postgresPetReads}.
   * Without it every read is a plain query of its own, straight to the pool.
   */
  coalesce?: boolean;
  /** With `coalesce`: queries of pages in flight at once (default 4); further pages wait and go in one query. */
  concurrency?: number;
  /** With `coalesce`: longest wait of a page for its query (default 2000 ms, as for a pooled connection); then 503. */
  slotTimeoutMs?: number;
}

/** Pages of one query at most. */
const MAX_PAGES_PER_QUERY = 100;
const NO_CURSOR = '-9223372036854775808';
const STATUSES = PetStatus.options.map((status) => `'${status}'`).join(', ');
const SAFE = `BETWEEN -${MAX_SAFE_ID} AND ${MAX_SAFE_ID}`;
/** A pet as JSON, the same bytes as JSON.stringify of the Pet (to_json escapes text as JSON.stringify does). */
const PET_JSON = `'{"id":' || p."id" || ',"name":' || to_json(p."name")::text || ',"categoryId":' || p."categoryId" || CASE WHEN p."status" IS NULL THEN '' ELSE ',"status":' || to_json(p."status")::text END || '}'`;
const ON_PAGE = 'FILTER (WHERE p.n <= a.lim)';

/**
 * Any number of list pages in one statement, each made into its JSON answer by PostgreSQL: `$1` the pages' indexes,
 * `$2` their statuses (null: any), `$3` their cursors (the smallest int8: none), `$4` their limits. One row per page:
 * its JSON, its last id, whether more follow, and whether a pet on it cannot be answered (an int64 beyond 2^53-1, an
 * unknown status: refused, never rounded or passed on, as pet-rows.ts does for rows). A page with a status reads the
 * `(status, id)` index: the row comparison is an index condition only that index can take (with `"id" > ?` the planner
 * took the primary key and filtered the status row by row).
 */
export const PAGES_SQL = `SELECT a.i, x.json, x.last, x.more, x.refused
FROM unnest($1::int4[], $2::text[], $3::int8[], $4::int4[]) AS a(i, status, after, lim)
CROSS JOIN LATERAL (
  SELECT '[' || coalesce(string_agg(${PET_JSON}, ',' ORDER BY p."id") ${ON_PAGE}, '') || ']' AS json,
    (max(p."id") ${ON_PAGE})::text AS last,
    count(*) > a.lim AS more,
    CASE WHEN coalesce(bool_or(NOT (p."id" ${SAFE} AND p."categoryId" ${SAFE})) ${ON_PAGE}, false) THEN 'int64'
      WHEN coalesce(bool_or(p."status" NOT IN (${STATUSES})) ${ON_PAGE}, false) THEN 'status' END AS refused
  FROM (
    SELECT q.*, row_number() OVER (ORDER BY q."id") AS n FROM (
      (SELECT "id", "name", "categoryId", "status" FROM "Pet"
        WHERE a.status IS NULL AND "id" > a.after ORDER BY "id" LIMIT a.lim + 1)
      UNION ALL
      (SELECT "id", "name", "categoryId", "status" FROM "Pet"
        WHERE "status" = a.status AND ("status", "id") > (a.status, a.after) ORDER BY "status", "id" LIMIT a.lim + 1)
    ) q
  ) p
) x`;

type PageRow = { i: number; json: string; last: string | null; more: boolean; refused: 'int64' | 'status' | null };
type Asked = { options: ListPetsOptions; at: number };

/** A page with a pet that cannot be answered (an int64 beyond 2^53-1, an unknown status). */
class UnanswerablePage extends Error {}

/** The page of a row of {@link PAGES_SQL}, or why it is refused. */
function pageOfRow(row: PageRow): Settled<PetPage> {
  if (row.refused === 'int64')
    return {
      ok: false,
      error: new UnanswerablePage('A pet on this page has an int64 beyond 2^53-1 and cannot be answered exactly'),
    };
  if (row.refused === 'status')
    return { ok: false, error: new UnanswerablePage('A pet on this page has an unknown status') };
  return { ok: true, value: petPage(row.json, row.last === null ? undefined : Number(row.last), row.more) };
}

/**
 * PostgreSQL: unnamed statements on the pool Prisma's adapter uses. node-postgres sends Parse, Bind, Execute and Sync
 * in one write, so a query is one round trip, as a named statement's is; the server plans it each time. Named
 * statements live in a server session, which a transaction-pooling PgBouncer shares between clients ("prepared
 * statement ... already exists"), so the service uses none and needs no pooler setting.
 *
 * List pages asked for together share one query ({@link PAGES_SQL}): those of one turn of the event loop, and those
 * that wait while `concurrency` queries are in flight (the group commit of writes, for reads: see group-commit.ts).
 * Identical pages in it are read once and share one answer. Each page comes back as its JSON answer, made by
 * PostgreSQL, so no row becomes an object here. Every page in a query was asked for before the query was sent, so each
 * answer is at least as fresh as a query of its own would have been. Under light load a query is one page. A get by
 * id goes in the same query, as the one-pet page after `id - 1`.
 */
export function postgresPetReads(pool: pg.Pool, options: PostgresReadOptions = {}): PetReads {
  const plain = {
    all: numbered(LIST_SQL.all),
    byStatus: numbered(LIST_SQL.byStatus),
    after: numbered(LIST_SQL.after),
    byStatusAfter: numbered(LIST_SQL.byStatusAfter),
    get: numbered(GET_SQL),
  };
  /** A plain query of its rows (without coalescing), int64 refused beyond 2^53-1 as for every read. */
  const rows = (text: string, values: unknown[]): Promise<Pet[]> =>
    new Promise((resolve, reject) => {
      // pg's callback form: with its promise form every read's rows survived minor GCs (BENCHMARKS.md, third session).
      pool.query<PgPetTuple>({ text, values, rowMode: 'array' }, (err, result) => {
        if (err) return reject(err);
        try {
          resolve(result.rows.map(fromPg));
        } catch (failed) {
          reject(failed);
        }
      });
    });
  const slotTimeoutMs = options.slotTimeoutMs ?? 2000;
  const stats = { reads: 0, queries: 0 };

  /** The pages `asked` in one query; each settles on its own. */
  const readPages = (asked: readonly ListPetsOptions[]): Promise<Settled<PetPage>[]> => {
    const slot = new Map<string, number>();
    const index: number[] = [];
    const distinct: ListPetsOptions[] = [];
    for (const page of asked) {
      const key = pageKey(page);
      let i = slot.get(key);
      if (i === undefined) {
        i = distinct.length;
        slot.set(key, i);
        distinct.push(page);
      }
      index.push(i);
    }
    const values = [
      distinct.map((_, i) => i),
      distinct.map((page) => page.status ?? null),
      // int8 parameters as decimal strings: exact for every int64.
      distinct.map((page) => (page.afterId === undefined ? NO_CURSOR : String(page.afterId))),
      distinct.map((page) => page.limit),
    ];
    stats.queries++;
    return new Promise((resolve, reject) => {
      pool.query<PageRow>({ text: PAGES_SQL, values }, (err, result) => {
        if (err) return reject(err);
        const pages = new Array<Settled<PetPage>>(distinct.length);
        for (const row of result.rows) pages[row.i] = pageOfRow(row);
        resolve(index.map((i) => pages[i] ?? { ok: false, error: new Error('a page had no row in its query') }));
      });
    });
  };

  const batches = groupCommit<Asked, PetPage>(
    async (asked) => {
      // A page that waited past the slot timeout is not sent: the database is too slow to answer it in time.
      const now = Date.now();
      const timely = (page: Asked) => now - page.at <= slotTimeoutMs;
      const sent = asked.filter(timely);
      const pages = sent.length > 0 ? await readPages(sent.map((page) => page.options)) : [];
      let next = 0;
      return asked.map((page) =>
        timely(page)
          ? pages[next++]!
          : { ok: false, error: new DatabaseBusyError(`no read slot within ${slotTimeoutMs} ms`) },
      );
    },
    { maxBatch: MAX_PAGES_PER_QUERY, maxInFlight: options.concurrency ?? 4 },
  );

  const read = (page: ListPetsOptions) => {
    stats.reads++;
    return batches.submit({ options: page, at: Date.now() });
  };

  return {
    list(page: ListPetsOptions) {
      if (options.coalesce !== false) return read(page);
      // int8 parameters as decimal strings: exact for every int64.
      const [kind, values] = listStatement(page, String);
      return rows(plain[kind], values).then((pets) => pageOfPets(pets, page.limit));
    },
    async get(id: number) {
      if (options.coalesce === false) return (await rows(plain.get, [String(id)]))[0];
      try {
        const page = await read({ limit: 1, afterId: id - 1 });
        return page.lastId === id ? petsOf(page)[0] : undefined;
      } catch (err) {
        // The pet after a missing id may be the one that cannot be answered: only this id's own row decides.
        if (err instanceof UnanswerablePage) return (await rows(plain.get, [String(id)]))[0];
        throw err;
      }
    },
    stats: () => (options.coalesce === false ? {} : { coalescing: { ...stats } }),
  };
}
