import type { Pet } from '@animal-store/contract';
import type pg from 'pg';
import { batches, type Settled } from '../batches.js';
import { DatabaseBusyError } from '../busy-error.js';
import { pageOfPets, petPage, petsOf, type PetPage } from '../pets/page.js';
import { petOfRow } from '../pets/rows.js';
import { GET_SQL, LIST_SQL, listStatement, pageKey } from '../pets/sql.js';
import type { PetReads } from '../pets/store.js';
import type { ListPetsOptions } from '../types.js';
import { NO_CURSOR, numbered, PAGES_SQL } from './sql.js';
import { dbWork, postgresOperation, type DbOperation } from '../../telemetry/db-telemetry.js';

export interface PostgresReadOptions {
  /**
   * List pages (and gets) asked for together are read by one query. See {@link postgresPetReads}. Without it every
   * read is a plain query of its own, straight to the pool.
   */
  coalesce: boolean;
  /** With `coalesce`: queries of pages in flight at once; further pages wait and go in one query. */
  concurrency: number;
  /** With `coalesce`: longest wait of a page for its query (as for a pooled connection); then 503. */
  slotTimeoutMs: number;
}

/** Pages of one query at most. */
const MAX_PAGES_PER_QUERY = 100;

/** `refused`: `int64`, or the enum field with an unknown value (see PAGES_SQL). */
type PageRow = { i: number; json: string; last: string | null; more: boolean; refused: string | null };
type Asked = { options: ListPetsOptions; at: number };

/** A page with a pet that cannot be answered (an int64 beyond 2^53-1, an enum field's unknown value). */
class UnanswerablePage extends Error {}

/** The page of a row of {@link PAGES_SQL}, or why it is refused. */
function pageOfRow(row: PageRow): Settled<PetPage> {
  if (row.refused === 'int64')
    return {
      ok: false,
      error: new UnanswerablePage('A pet on this page has an int64 beyond 2^53-1 and cannot be answered exactly'),
    };
  if (row.refused !== null)
    return { ok: false, error: new UnanswerablePage(`A pet on this page has an unknown ${row.refused}`) };
  return { ok: true, value: petPage(row.json, row.last === null ? undefined : Number(row.last), row.more) };
}

/**
 * PostgreSQL: unnamed statements on the pool (the key store's Prisma adapter uses it too). node-postgres sends Parse,
 * Bind, Execute and Sync in one write, so a query is one round trip, as a named statement's is; the server plans it
 * each time. Named statements live in a server session, which a transaction-pooling PgBouncer shares between clients
 * ("prepared statement ... already exists"), so the service uses none and needs no pooler setting.
 *
 * List pages asked for together share one query ({@link PAGES_SQL}): those of one turn of the event loop, and those
 * that wait while `concurrency` queries are in flight (see batches.ts). Identical pages in it are read once and share
 * one answer. Each page comes back as its JSON answer, made by PostgreSQL, so no row becomes an object here. Every page in a query was asked for before the query was sent, so each
 * answer is at least as fresh as a query of its own would have been. Under light load a query is one page. A get by
 * id goes in the same query, as the one-pet page after `id - 1`.
 */
export function postgresPetReads(pool: pg.Pool, options: PostgresReadOptions): PetReads {
  const plain = plainReads(pool);
  if (!options.coalesce) return { ...plain, stats: () => ({}) };
  const stats = { reads: 0, queries: 0 };
  const read = batchedPages(pool, options, stats);
  return {
    list: read,
    async get(id: number) {
      try {
        const page = await read({ limit: 1, afterId: id - 1 });
        return page.lastId === id ? petsOf(page)[0] : undefined;
      } catch (err) {
        // The pet after a missing id may be the one that cannot be answered: only this id's own row decides.
        if (err instanceof UnanswerablePage) return plain.get(id);
        throw err;
      }
    },
    stats: () => ({ coalescing: { ...stats } }),
  };
}

/** Reads without batching: a plain query of its rows each, int64 refused beyond 2^53-1 as for every read. */
function plainReads(pool: pg.Pool): Pick<PetReads, 'list' | 'get'> {
  const sql = { ...LIST_SQL, get: GET_SQL };
  const statements = Object.fromEntries(
    Object.entries(sql).map(([kind, text]) => [kind, numbered(text)]),
  ) as typeof sql;
  // The work of each statement as the database conventions name it (a span inside sampled requests, and its timing).
  const operations = Object.fromEntries(
    Object.entries(statements).map(([kind, text]) => [kind, postgresOperation(pool, 'SELECT', text)]),
  ) as Record<keyof typeof sql, DbOperation>;
  const rows = (kind: keyof typeof sql, values: unknown[]): Promise<Pet[]> =>
    dbWork(
      operations[kind],
      () =>
        new Promise<Pet[]>((resolve, reject) => {
          // pg's callback form: with its promise form every read's rows outlived the young generation
          // (docs/architecture.md#garbage-on-the-read-path).
          pool.query<unknown[]>({ text: statements[kind], values, rowMode: 'array' }, (err, result) => {
            if (err) return reject(err);
            try {
              resolve(result.rows.map(petOfRow));
            } catch (failed) {
              reject(failed);
            }
          });
        }),
    );
  return {
    list(page: ListPetsOptions) {
      // int8 parameters as decimal strings: exact for every int64.
      const [kind, values] = listStatement(page, String);
      return rows(kind, values).then((pets) => pageOfPets(pets, page.limit));
    },
    async get(id: number) {
      return (await rows('get', [String(id)]))[0];
    },
  };
}

/** The pages `asked` in one query ({@link PAGES_SQL}), identical ones read once; each settles on its own. */
function readPages(pool: pg.Pool, asked: readonly ListPetsOptions[]): Promise<Settled<PetPage>[]> {
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
  return new Promise((resolve, reject) => {
    pool.query<PageRow>({ text: PAGES_SQL, values }, (err, result) => {
      if (err) return reject(err);
      const pages = new Array<Settled<PetPage>>(distinct.length);
      for (const row of result.rows) pages[row.i] = pageOfRow(row);
      resolve(index.map((i) => pages[i] ?? { ok: false, error: new Error('a page had no row in its query') }));
    });
  });
}

/** Pages read in batches of those asked together (see batches.ts), at most `concurrency` queries in flight. */
function batchedPages(
  pool: pg.Pool,
  { concurrency, slotTimeoutMs }: PostgresReadOptions,
  stats: { reads: number; queries: number },
): (page: ListPetsOptions) => Promise<PetPage> {
  const queries = batches<Asked, PetPage>(
    async (asked) => {
      // A page that waited past the slot timeout is not sent: the database is too slow to answer it in time.
      const now = Date.now();
      const timely = (page: Asked) => now - page.at <= slotTimeoutMs;
      const sent = asked.filter(timely);
      if (sent.length > 0) stats.queries++;
      const pages =
        sent.length > 0
          ? await readPages(
              pool,
              sent.map((page) => page.options),
            )
          : [];
      let next = 0;
      return asked.map((page) =>
        timely(page)
          ? pages[next++]!
          : { ok: false, error: new DatabaseBusyError(`no read slot within ${slotTimeoutMs} ms`) },
      );
    },
    {
      maxBatch: MAX_PAGES_PER_QUERY,
      maxInFlight: concurrency,
      operation: postgresOperation(pool, 'SELECT', PAGES_SQL),
    },
  );
  return (page) => {
    stats.reads++;
    return queries.submit({ options: page, at: Date.now() });
  };
}
