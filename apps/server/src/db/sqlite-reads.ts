import type { Pet } from '@animal-store/contract';
import type BetterSqlite3 from 'better-sqlite3';
import { sharedPage } from '../shared-page.js';
import { PageCache } from './page-cache.js';
import { fromSqlite, type SqlitePetTuple } from './pet-rows.js';
import { GET_SQL, listStatement, pageKey, SQLITE_LIST_SQL, type PetReads } from './pet-sql.js';
import type { ListPetsOptions } from './types.js';

export interface SqliteReadOptions {
  /** List pages kept in memory while the database is unchanged (0: none). See {@link sqlitePetReads}. */
  pageCacheEntries?: number;
}

/** SQLite reads, told of the pets this process's writer commits on the same connection (see pet-writes.ts). */
export type SqlitePetReads = PetReads & { created(pets: readonly Pet[]): void };

type CachedPage = { options: ListPetsOptions; rows: readonly Pet[] };

/**
 * A page read with `options` can show a pet created after it was read only if the page was not full: pets are only
 * ever appended, and SQLite's AUTOINCREMENT gives every new pet an id above all earlier ones, so a new pet sorts after
 * the last row of any full page. It must also match the page's status and lie after its cursor.
 */
export function pageMayShow({ options, rows }: CachedPage, pets: readonly Pet[]): boolean {
  if (rows.length >= options.limit) return false;
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
 * List pages are kept in memory and answered again while nothing they show has changed. `PRAGMA data_version` on this
 * connection changes whenever any OTHER connection commits (this process's Prisma connection, the key CLI, another
 * process on the same file), and it is read before every answer: such a commit drops every page, since what it
 * changed is unknown. This connection's own commits (the pets this process creates) do not move it; the writer calls
 * `created` with the new pets synchronously after each commit, before anything else runs, and only the pages those
 * pets may enter are dropped (see {@link pageMayShow}). So a page is never answered after a commit it would not show,
 * while a create no longer empties the whole cache. Only SQLite has such a cheap, exact check.
 */
export function sqlitePetReads(db: BetterSqlite3.Database, options: SqliteReadOptions = {}): SqlitePetReads {
  // safeIntegers: int64 columns arrive as bigint, so values beyond 2^53-1 are refused, never rounded.
  const prep = (sql: string) => db.prepare<unknown[], SqlitePetTuple>(sql).safeIntegers(true).raw(true);
  const list = {
    all: prep(SQLITE_LIST_SQL.all),
    byStatus: prep(SQLITE_LIST_SQL.byStatus),
    after: prep(SQLITE_LIST_SQL.after),
    byStatusAfter: prep(SQLITE_LIST_SQL.byStatusAfter),
  };
  const get = prep(GET_SQL);
  const read = (options: ListPetsOptions): Pet[] => {
    const [kind, params] = listStatement(options, BigInt);
    return list[kind].all(...params).map(fromSqlite);
  };

  const maxPages = options.pageCacheEntries ?? 0;
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  const cache = new PageCache<CachedPage>(maxPages);
  // A cached page is shared by every answer of it until a commit may change it.
  const cachedRead = (options: ListPetsOptions): readonly Pet[] =>
    cache.get(pageKey(options), dataVersion.get()!, () => ({ options, rows: sharedPage(read(options)) })).rows;

  return {
    list: maxPages > 0 ? async (options) => cachedRead(options) : async (options) => read(options),
    stats: () => (maxPages > 0 ? { pageCache: { hits: cache.hits, misses: cache.misses } } : {}),
    created: (pets) => cache.drop((page) => pageMayShow(page, pets)),
    async get(id: number) {
      const row = get.get(BigInt(id));
      return row ? fromSqlite(row) : undefined;
    },
  };
}
