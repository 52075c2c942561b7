import type { Pet } from '@animal-store/contract';
import type pg from 'pg';
import { sharedPage } from '../shared-page.js';
import { fromPg, type PgPetTuple } from './pet-rows.js';
import { GET_SQL, LIST_SQL, listStatement, numbered, pageKey, type PetReads } from './pet-sql.js';
import { createReadQueue } from './read-queue.js';
import type { ListPetsOptions } from './types.js';

export interface PostgresReadOptions {
  /** Identical waiting reads share one query (default true). See {@link createReadQueue}. */
  coalesce?: boolean;
  /** With `coalesce`: read queries in flight at once (default 4); further reads wait, and identical ones share. */
  concurrency?: number;
  /** With `coalesce`: longest wait for a slot (default 2000 ms, as for a pooled connection); then 503 "busy". */
  slotTimeoutMs?: number;
}

type Query = { text: string; values: unknown[] };

/**
 * PostgreSQL: unnamed statements on the pool Prisma's adapter uses. node-postgres sends Parse, Bind, Execute and Sync
 * in one write, so a read is one round trip, as a named statement's is; the server plans it each time. Named
 * statements live in a server session, which a transaction-pooling PgBouncer shares between clients ("prepared
 * statement ... already exists"), so the service uses none and needs no pooler setting. Reads go through a read queue (at most `concurrency` in flight, identical waiting reads share one query), which leaves most of
 * the pool to writes and key lookups.
 */
export function postgresPetReads(pool: pg.Pool, options: PostgresReadOptions = {}): PetReads {
  const sql = {
    all: numbered(LIST_SQL.all),
    byStatus: numbered(LIST_SQL.byStatus),
    after: numbered(LIST_SQL.after),
    byStatusAfter: numbered(LIST_SQL.byStatusAfter),
    get: numbered(GET_SQL),
  };
  // pg's callback form, wrapped in a promise of our own: with pg's promise form every read's rows survived minor GCs
  // (see BENCHMARKS.md, third session).
  const run = (query: Query, on: pg.Pool | pg.PoolClient = pool): Promise<readonly Pet[]> =>
    new Promise((resolve, reject) => {
      on.query<PgPetTuple>({ ...query, rowMode: 'array' }, (err, result) => {
        if (err) return reject(err);
        try {
          resolve(sharedPage(result.rows.map(fromPg)));
        } catch (failed) {
          reject(failed);
        }
      });
    });

  const queue = createReadQueue<pg.PoolClient, readonly Pet[]>({
    concurrency: options.concurrency ?? 4,
    slotTimeoutMs: options.slotTimeoutMs ?? 2000,
    connect: () => pool.connect(),
    release: (client, err) => client.release(err), // as pool.query does: a client whose query failed is not reused
  });
  const read =
    options.coalesce === false
      ? (_key: string, query: Query) => run(query)
      : (key: string, query: Query) => queue.read(key, (client) => run(query, client));

  return {
    list(options: ListPetsOptions) {
      // int8 parameters as decimal strings: exact for every int64.
      const [kind, values] = listStatement(options, String);
      return read(pageKey(options), { text: sql[kind], values });
    },
    async get(id: number) {
      return (await read(`id|${id}`, { text: sql.get, values: [String(id)] }))[0];
    },
    stats: () => (options.coalesce === false ? {} : { coalescing: { ...queue.stats } }),
  };
}
