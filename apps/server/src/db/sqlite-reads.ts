import type { Pet } from '@animal-store/contract';
import type BetterSqlite3 from 'better-sqlite3';
import { sharedPage } from '../shared-page.js';
import { PageCache } from './page-cache.js';
import { fromSqlite, type SqlitePetTuple } from './pet-rows.js';
import { GET_SQL, LIST_SQL, listStatement, pageKey, type PetReads } from './pet-sql.js';
import type { ListPetsOptions } from './types.js';

export interface SqliteReadOptions {
  /** List pages kept in memory while the database is unchanged (0: none). See {@link sqlitePetReads}. */
  pageCacheEntries?: number;
}

/**
 * SQLite: statements prepared once on a connection of their own (WAL: readers do not block the writer, nor it them).
 *
 * List pages are kept in memory and answered again while the database is unchanged. `PRAGMA data_version` on this
 * reading connection changes whenever any other connection commits (this process's Prisma writer, the key CLI, another
 * process on the same file), and it is read before every answer, so a page is never answered after a commit it would
 * not show: no staleness, no invalidation to forget. Only SQLite has such a cheap, exact check.
 */
export function sqlitePetReads(db: BetterSqlite3.Database, options: SqliteReadOptions = {}): PetReads {
  // safeIntegers: int64 columns arrive as bigint, so values beyond 2^53-1 are refused, never rounded.
  const prep = (sql: string) => db.prepare<unknown[], SqlitePetTuple>(sql).safeIntegers(true).raw(true);
  const list = {
    all: prep(LIST_SQL.all),
    byStatus: prep(LIST_SQL.byStatus),
    after: prep(LIST_SQL.after),
    byStatusAfter: prep(LIST_SQL.byStatusAfter),
  };
  const get = prep(GET_SQL);
  const read = (options: ListPetsOptions): Pet[] => {
    const [kind, params] = listStatement(options, BigInt);
    return list[kind].all(...params).map(fromSqlite);
  };

  const maxPages = options.pageCacheEntries ?? 0;
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  const cache = new PageCache<readonly Pet[]>(maxPages);
  // A cached page is shared by every answer of it until the next commit.
  const cachedRead = (options: ListPetsOptions): readonly Pet[] =>
    cache.get(pageKey(options), dataVersion.get()!, () => sharedPage(read(options)));

  return {
    list: maxPages > 0 ? async (options) => cachedRead(options) : async (options) => read(options),
    stats: () => (maxPages > 0 ? { pageCache: { hits: cache.hits, misses: cache.misses } } : {}),
    async get(id: number) {
      const row = get.get(BigInt(id));
      return row ? fromSqlite(row) : undefined;
    },
  };
}
