import { MAX_SAFE_ID, PetStatus, type NewPet, type Pet } from '@animal-store/contract';
import type BetterSqlite3 from 'better-sqlite3';
import type pg from 'pg';
import type { PrismaClient } from '../generated/sqlite/client.js';
import { sharedPage } from '../shared-page.js';
import { PLANS, type ApiKeyRecord, type ApiKeyStore, type ListPetsOptions, type NewApiKey, type PetStore, type Plan, type ReadStats } from './types.js';

/**
 * Prisma-backed stores. Both providers' generated clients have the same model API, so one implementation serves both;
 * it is typed against the SQLite client.
 */
type Client = Pick<PrismaClient, 'pet' | 'apiKey'>;

type PetRow = { id: bigint; name: string; categoryId: bigint; status: string | null };

/** int64 from the database -> JSON number; values beyond 2^53-1 cannot be sent exactly and are never rounded. */
const MAX_ID = BigInt(MAX_SAFE_ID);
const MIN_ID = -MAX_ID;

function toSafeNumber(value: bigint, field: string): number {
  if (value > MAX_ID || value < MIN_ID) {
    throw new Error(`${field} ${value} is beyond 2^53-1 and cannot be represented exactly`);
  }
  return Number(value);
}

const STATUSES: ReadonlySet<string> = new Set(PetStatus.options);

/** A pet from checked column values; `status` must be one of the contract's (same rule as PetStatus.parse, no zod per row). */
function petOf(id: number, name: string, categoryId: number, status: string | null): Pet {
  const pet: Pet = { id, name, categoryId };
  if (status !== null) {
    if (!STATUSES.has(status)) throw new Error(`Pet ${id} has an unknown status`);
    pet.status = status as PetStatus;
  }
  return pet;
}

function toPet(row: PetRow): Pet {
  return petOf(toSafeNumber(row.id, 'Pet.id'), row.name, toSafeNumber(row.categoryId, 'Pet.categoryId'), row.status);
}

const petSelect = { id: true, name: true, categoryId: true, status: true } as const;

/**
 * The two reads on every client's hot path (list and get), as prepared SQL. The profile of the server under load showed
 * Prisma's query interpretation plus the adapter (which re-prepares every statement) as the largest cost of a read.
 * Writes, keys and everything else stay with Prisma. Same rows, same order, same int64 rule as the Prisma path.
 */
export type PetReads = Pick<PetStore, 'list' | 'get'> & { stats(): ReadStats };

const COLUMNS = 'SELECT "id", "name", "categoryId", "status" FROM "Pet"';
const LIST_SQL = {
  all: `${COLUMNS} ORDER BY "id" ASC LIMIT ?`,
  byStatus: `${COLUMNS} WHERE "status" = ? ORDER BY "id" ASC LIMIT ?`,
  after: `${COLUMNS} WHERE "id" > ? ORDER BY "id" ASC LIMIT ?`,
  byStatusAfter: `${COLUMNS} WHERE "status" = ? AND "id" > ? ORDER BY "id" ASC LIMIT ?`,
} as const;
const GET_SQL = `${COLUMNS} WHERE "id" = ?`;
type ListKind = keyof typeof LIST_SQL;

/**
 * Which list statement answers these options, with its parameters in order. `id` converts the cursor id to what the
 * driver binds exactly as int64 (a bigint for better-sqlite3, decimal text for pg).
 */
function listStatement({ limit, status, afterId }: ListPetsOptions, id: (value: number) => unknown): [ListKind, unknown[]] {
  if (status === undefined) return afterId === undefined ? ['all', [limit]] : ['after', [id(afterId), limit]];
  return afterId === undefined ? ['byStatus', [status, limit]] : ['byStatusAfter', [status, id(afterId), limit]];
}

/** One key per distinct page: what the page cache and the read queue tell pages apart by. */
const pageKey = ({ limit, status, afterId }: ListPetsOptions) => `${limit}|${status ?? ''}|${afterId ?? ''}`;

/** A row as an array, in COLUMNS order: cheaper to build than an object per row, for the driver and for us. */
type PetTuple = [id: bigint, name: string, categoryId: bigint, status: string | null];
const fromTuple = (row: PetTuple): Pet => petOf(toSafeNumber(row[0], 'Pet.id'), row[1], toSafeNumber(row[2], 'Pet.categoryId'), row[3]);

export interface SqliteReadOptions {
  /** List pages kept in memory while the database is unchanged (0: none). See {@link sqlitePetReads}. */
  pageCacheEntries?: number;
}

/**
 * SQLite: statements prepared once on a connection of their own (WAL: readers do not block the writer, nor it them).
 *
 * List pages are kept in memory (at most `pageCacheEntries`, least recently used evicted) and answered again while the
 * database is unchanged. `PRAGMA data_version` on this reading connection changes whenever any other connection commits
 * (this process's Prisma writer, the key CLI, another process on the same file), and it is read before every answer,
 * so a page is never answered after a commit it would not show: no staleness, no invalidation to forget. Any commit
 * empties the cache. Only SQLite has such a cheap, exact check; PostgreSQL pages are always read.
 */
export function sqlitePetReads(db: BetterSqlite3.Database, options: SqliteReadOptions = {}): PetReads {
  // safeIntegers: int64 columns arrive as bigint, so values beyond 2^53-1 are refused by toSafeNumber, never rounded.
  const prep = (sql: string) => db.prepare<unknown[], PetTuple>(sql).safeIntegers(true).raw(true);
  const list = { all: prep(LIST_SQL.all), byStatus: prep(LIST_SQL.byStatus), after: prep(LIST_SQL.after), byStatusAfter: prep(LIST_SQL.byStatusAfter) };
  const get = prep(GET_SQL);
  const read = (options: ListPetsOptions): Pet[] => {
    const [kind, params] = listStatement(options, BigInt);
    return list[kind].all(...params).map(fromTuple);
  };

  const maxPages = options.pageCacheEntries ?? 0;
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  const pages = new Map<string, readonly Pet[]>();
  let pagesVersion: number | undefined;
  const pageCache = { hits: 0, misses: 0 };
  const cachedRead = (options: ListPetsOptions): readonly Pet[] => {
    const version = dataVersion.get();
    if (version !== pagesVersion) {
      pages.clear();
      pagesVersion = version;
    }
    const key = pageKey(options);
    let page = pages.get(key);
    if (page !== undefined) {
      pageCache.hits++;
      pages.delete(key); // most recently used last
    } else {
      pageCache.misses++;
      // Shared by every answer of this page until the next commit.
      page = sharedPage(read(options));
      if (pages.size >= maxPages) pages.delete(pages.keys().next().value!);
    }
    pages.set(key, page);
    return page;
  };

  return {
    list: maxPages > 0 ? async (options) => cachedRead(options) : async (options) => read(options),
    stats: () => (maxPages > 0 ? { pageCache: { ...pageCache } } : {}),
    async get(id: number) {
      const row = get.get(BigInt(id));
      return row ? fromTuple(row) : undefined;
    },
  };
}

const numbered = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

/** int8 arrives as decimal text: converted directly, and refused (never rounded) beyond 2^53-1, like toSafeNumber. */
function pgSafeNumber(text: string, field: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new Error(`${field} ${text} is beyond 2^53-1 and cannot be represented exactly`);
  return value;
}

/** A row as an array (rowMode 'array'), in COLUMNS order. */
type PgPetTuple = [id: string, name: string, categoryId: string, status: string | null];
const fromPg = (row: PgPetTuple): Pet => petOf(pgSafeNumber(row[0], 'Pet.id'), row[1], pgSafeNumber(row[2], 'Pet.categoryId'), row[3]);

export interface PostgresReadOptions {
  /** Identical waiting reads share one query (default true). See {@link postgresPetReads}. */
  coalesce?: boolean;
  /** With `coalesce`: read queries in flight at once (default 4); further reads wait, and identical ones share. */
  concurrency?: number;
}

/**
 * PostgreSQL: named prepared statements on the pool Prisma's adapter uses (each connection prepares them once).
 *
 * Reads go through a queue: at most `concurrency` read queries are in flight (4 by default, so reads also leave most
 * of the pool to writes and key lookups), and identical reads (same page, same id) that wait share one query. A batch
 * stays open until the I/O of the current turn of the event loop has been handled (so identical reads of requests that
 * arrived together share, even when a connection is free), then until it has a slot and a connection; then it closes
 * and its query is sent: every read in it arrived before its query was sent, so each answer is at least as fresh as a
 * query of its own would have been (a client that saw its create answered sees the pet in its next list). Under light
 * load a batch is one read and nothing waits; under load, the queue holds one query per distinct read instead of one
 * per request. Four in flight keep one event loop fed: a read is a single index range of at most 101 rows, answered in
 * well under a millisecond even over a network, while the server spends a few hundred microseconds on each answer.
 */
export function postgresPetReads(pool: pg.Pool, options: PostgresReadOptions = {}): PetReads {
  const sql = {
    all: numbered(LIST_SQL.all),
    byStatus: numbered(LIST_SQL.byStatus),
    after: numbered(LIST_SQL.after),
    byStatusAfter: numbered(LIST_SQL.byStatusAfter),
    get: numbered(GET_SQL),
  };
  type Query = { name: string; text: string; values: unknown[] };
  // pg's callback form, wrapped in a promise of our own. Measured at 1,000 req/s: with pg's promise form of
  // client.query, every read's rows survived minor GCs and were promoted (scavenges of 3-5 ms instead of under 1 ms,
  // the largest part of the tail latency); with the callback form (which pool.query uses inside) they do not.
  const run = (query: Query, on: pg.Pool | pg.PoolClient = pool): Promise<readonly Pet[]> =>
    new Promise((resolve, reject) => {
      on.query<PgPetTuple>({ ...query, rowMode: 'array' }, (err, result) => {
        if (err) return reject(err);
        try {
          resolve(sharedPage(result.rows.map(fromPg)));
        } catch (failed) {
          reject(failed as Error);
        }
      });
    });

  const concurrency = options.concurrency ?? 4;
  let inFlight = 0;
  const waiting: Array<() => void> = [];
  const acquire = (): Promise<void> => {
    if (inFlight < concurrency) {
      inFlight++;
      return Promise.resolve();
    }
    return new Promise((resolve) => waiting.push(resolve));
  };
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else inFlight--;
  };

  /** Resolves once the I/O of the current turn of the event loop has been handled. */
  const endOfTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
  const open = new Map<string, Promise<readonly Pet[]>>();
  const coalescing = { reads: 0, queries: 0 };
  const shared = (key: string, query: Query): Promise<readonly Pet[]> => {
    coalescing.reads++;
    const joined = open.get(key);
    if (joined !== undefined) return joined;
    coalescing.queries++;
    const close = () => open.get(key) === batch && open.delete(key);
    const batch: Promise<readonly Pet[]> = endOfTurn().then(acquire).then(async () => {
      try {
        // Closed once it has a connection (or failed to get one): later reads wait for a query sent after they arrived.
        const client = await pool.connect().finally(close);
        try {
          const page = await run(query, client);
          client.release();
          return page;
        } catch (err) {
          client.release(err as Error); // as pool.query does: a client whose query failed is not reused
          throw err;
        }
      } finally {
        release();
      }
    });
    open.set(key, batch);
    return batch;
  };
  const read = options.coalesce === false ? (_key: string, query: Query) => run(query) : shared;

  return {
    list(options: ListPetsOptions) {
      // int8 parameters as decimal strings: exact for every int64.
      const [kind, values] = listStatement(options, String);
      return read(pageKey(options), { name: `pets_list_${kind}`, text: sql[kind], values });
    },
    async get(id: number) {
      return (await read(`id|${id}`, { name: 'pets_get', text: sql.get, values: [String(id)] }))[0];
    },
    stats: () => (options.coalesce === false ? {} : { coalescing: { ...coalescing } }),
  };
}

/** Pets through Prisma; `reads`, when given, answers list and get instead (see {@link PetReads}). */
export function prismaPetStore(prisma: Client, reads?: PetReads): PetStore {
  const store: PetStore = {
    async list({ limit, status, afterId }: ListPetsOptions) {
      const rows = await prisma.pet.findMany({
        select: petSelect,
        where: {
          ...(status !== undefined ? { status } : {}),
          ...(afterId !== undefined ? { id: { gt: BigInt(afterId) } } : {}),
        },
        orderBy: { id: 'asc' },
        take: limit,
      });
      return rows.map(toPet);
    },
    async create(pet: NewPet) {
      const row = await prisma.pet.create({
        select: petSelect,
        data: { name: pet.name, categoryId: BigInt(pet.categoryId), status: pet.status ?? null },
      });
      return toPet(row);
    },
    async get(id: number) {
      const row = await prisma.pet.findUnique({ select: petSelect, where: { id: BigInt(id) } });
      return row ? toPet(row) : undefined;
    },
  };
  return reads ? { ...store, list: reads.list, get: reads.get } : store;
}

type KeyRow = Omit<ApiKeyRecord, 'plan'> & { plan: string };

function toKey(row: KeyRow): ApiKeyRecord {
  if (!(PLANS as readonly string[]).includes(row.plan)) throw new Error(`ApiKey ${row.id} has an unknown plan`);
  return { ...row, plan: row.plan as Plan };
}

export function prismaApiKeyStore(prisma: Client): ApiKeyStore {
  return {
    async findByHash(hash) {
      const row = await prisma.apiKey.findUnique({ where: { hash } });
      return row ? toKey(row) : undefined;
    },
    async create(key: NewApiKey) {
      return toKey(await prisma.apiKey.create({ data: key }));
    },
    async list() {
      return (await prisma.apiKey.findMany({ orderBy: { id: 'asc' } })).map(toKey);
    },
    async revoke(match, at) {
      const where = 'id' in match ? { id: match.id } : { hash: match.hash };
      const row = await prisma.apiKey.findUnique({ where });
      if (!row) return undefined;
      if (row.revokedAt) return toKey(row);
      return toKey(await prisma.apiKey.update({ where: { id: row.id }, data: { revokedAt: at } }));
    },
  };
}
