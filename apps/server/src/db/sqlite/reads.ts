import type { Pet } from '@animal-store/contract';
import type BetterSqlite3 from 'better-sqlite3';
import { petPage, type PetPage } from '../pets/page.js';
import { petOfRow } from '../pets/rows.js';
import { GET_SQL, listStatement, pageKey, type ListKind } from '../pets/sql.js';
import type { PetReads } from '../pets/store.js';
import type { ListPetsOptions } from '../types.js';
import { PageCache } from './page-cache.js';
import { PetJsonCache } from './pet-json-cache.js';
import { SQLITE_LIST_IDS_SQL, SQLITE_LIST_SQL } from './sql.js';
import { dbWork, type DbOperation } from '../../telemetry/db-telemetry.js';

export interface SqliteReadOptions {
  /** List pages kept in memory while the database is unchanged (0: none). See {@link sqlitePetReads}. */
  pageCacheEntries: number;
  /** Pets whose JSON is kept in memory to answer pages from (0: none, every page reads its rows). */
  petCacheEntries: number;
}

/** SQLite reads, told of the pets this process's writer commits on the same connection (see writes.ts). */
export type SqlitePetReads = PetReads & { created(pets: readonly Pet[]): void };

type CachedPage = { options: ListPetsOptions; page: PetPage };

/**
 * A page read with `options` can show a pet created after it was read only if no pet followed it: pets are only ever
 * appended, and SQLite's AUTOINCREMENT gives every new pet an id above all earlier ones, so a new pet sorts after the
 * pet that followed a page. It must also match the page's status and lie after its cursor.
 */
export function pageMayShow({ options, page }: CachedPage, pets: readonly Pet[]): boolean {
  if (page.more) return false;
  return pets.some(
    (pet) =>
      (options.status === undefined || pet.status === options.status) &&
      (options.afterId === undefined || pet.id > options.afterId),
  );
}

/**
 * SQLite: statements prepared once, on the connection this process's pet writes use too (better-sqlite3 is
 * synchronous, so reads and commits never interleave).
 *
 * A list page is answered without a Pet object per row: its ids come from the indexes alone (cheap: integers, no
 * text), and its JSON is joined from the JSON of each pet, kept in memory (pets are never changed through the service,
 * only created). A page with a pet not in memory reads its rows instead, and keeps their JSON. Turning rows into
 * values, objects and JSON was most of a varied page's cost (docs/architecture.md#sqlite-reads).
 *
 * `PRAGMA data_version` on this connection changes whenever any OTHER connection commits (this process's Prisma
 * connection for keys, the key CLI, another process on the same file, someone editing a row by hand), and it is read
 * before every list: such a commit drops every pet's JSON and every cached page, since what it changed is unknown. This
 * connection's own commits (the pets this process creates) do not move it; the writer calls `created` with the new
 * pets synchronously after each commit, before anything else runs: their JSON is kept, and only the cached pages they
 * may enter are dropped (see {@link pageMayShow}). So a page is never answered after a commit it would not show, while
 * a create does not empty the caches. Only SQLite has such a cheap, exact check.
 *
 * Whole pages are kept too (`pageCacheEntries`, least recently used evicted): a page asked again costs no query.
 */
/** The reads as the database conventions name them (a span inside sampled requests, and their timing). */
const SELECT_PAGE: DbOperation = { system: 'sqlite', operation: 'SELECT', collection: 'pets', namespace: 'main' };
const SELECT_PET: DbOperation = { ...SELECT_PAGE, query: GET_SQL };

export function sqlitePetReads(db: BetterSqlite3.Database, options: SqliteReadOptions): SqlitePetReads {
  // safeIntegers: int64 columns arrive as bigint, so values beyond 2^53-1 are refused, never rounded.
  const get = db.prepare<[bigint], unknown[]>(GET_SQL).safeIntegers(true).raw(true);
  const petJson = new PetJsonCache(options.petCacheEntries);
  const read = pageReader(db, petJson);
  const maxPages = options.pageCacheEntries;
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  let version: number | undefined;
  const cache = new PageCache<CachedPage>(maxPages);

  return {
    async list(options) {
      const now = dataVersion.get()!;
      if (now !== version) {
        version = now;
        petJson.clear();
        cache.clear();
      }
      if (maxPages === 0) return dbWork(SELECT_PAGE, () => read(options));
      // A cached page is shared by every answer of it until a commit may change it.
      return cache.get(pageKey(options), () => ({ options, page: dbWork(SELECT_PAGE, () => read(options)) })).page;
    },
    stats: () => (maxPages > 0 ? { pageCache: { hits: cache.hits, misses: cache.misses } } : {}),
    created(pets) {
      for (const pet of pets) petJson.set(pet.id, JSON.stringify(pet));
      cache.drop((page) => pageMayShow(page, pets));
    },
    async get(id: number) {
      const row = dbWork(SELECT_PET, () => get.get(BigInt(id)));
      return row ? petOfRow(row) : undefined;
    },
  };
}

/** One prepared statement per list statement kind. */
const byKind = <S>(sql: Record<ListKind, string>, prepare: (sql: string) => S): Record<ListKind, S> => ({
  all: prepare(sql.all),
  byStatus: prepare(sql.byStatus),
  after: prepare(sql.after),
  byStatusAfter: prepare(sql.byStatusAfter),
});

/** Reads a page from its ids and the JSON `petJson` keeps for them; from its rows when a pet's JSON is not kept. */
function pageReader(db: BetterSqlite3.Database, petJson: PetJsonCache): (options: ListPetsOptions) => PetPage {
  const rowsOf = byKind(SQLITE_LIST_SQL, (sql) => db.prepare<unknown[], unknown[]>(sql).safeIntegers(true).raw(true));
  // Ids as JS numbers: an id beyond 2^53-1 arrives rounded to one that no pet's JSON is kept under (its rows are read,
  // and refused), since only ids read exactly as bigint are ever kept.
  const idsOf = byKind(SQLITE_LIST_IDS_SQL, (sql) => db.prepare<unknown[], number>(sql).pluck(true));

  /** The page from its rows (one more than the limit, by the statement `kind` with `params`), keeping each pet's JSON. */
  const readRows = (kind: ListKind, params: unknown[], limit: number): PetPage => {
    const rows = rowsOf[kind].all(...params);
    const count = Math.min(rows.length, limit);
    const parts = new Array<string>(count);
    let lastId: number | undefined;
    for (let i = 0; i < count; i++) {
      const pet = petOfRow(rows[i]!);
      petJson.set(pet.id, (parts[i] = JSON.stringify(pet)));
      lastId = pet.id;
    }
    return petPage(`[${parts.join(',')}]`, lastId, rows.length > limit);
  };
  return (options) => {
    const [kind, params] = listStatement(options, BigInt);
    const found = idsOf[kind].all(...params);
    const count = Math.min(found.length, options.limit);
    const parts = new Array<string>(count);
    for (let i = 0; i < count; i++) {
      const json = petJson.get(found[i]!);
      if (json === undefined) return readRows(kind, params, options.limit);
      parts[i] = json;
    }
    return petPage(`[${parts.join(',')}]`, found[count - 1], found.length > options.limit);
  };
}
