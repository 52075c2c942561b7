import type BetterSqlite3 from 'better-sqlite3';
import type { ApiKeyStore } from '../types.js';

type LastUseWrites = Pick<ApiKeyStore, 'recordLastUsed' | 'recordLastDeprecatedCall'>;

/**
 * Keys' last-use times on SQLite, written on the connection the pet reads use rather than through Prisma's: a commit
 * on any other connection moves this connection's `data_version`, which drops every cached page and pet JSON
 * (reads.ts), and the last-use flush commits whenever a key is used in a new minute. The rule is the Prisma store's
 * (prisma/key-store.ts): a time only moves forward, so replicas flushing in any order leave the latest. Times are
 * stored as Prisma's SQLite adapter stores a DateTime (ISO 8601, `+00:00`), so its reads and comparisons agree.
 */
export function sqliteLastUseWrites(db: BetterSqlite3.Database): LastUseWrites {
  const writer = (column: 'lastUsedAt' | 'lastDeprecatedCallAt') => {
    const update = db.prepare<[{ at: string; ids: string }]>(
      `UPDATE "ApiKey" SET "${column}" = @at WHERE "id" IN (SELECT value FROM json_each(@ids)) ` +
        `AND ("${column}" IS NULL OR "${column}" < @at)`,
    );
    return async (at: Date, ids: readonly number[]): Promise<void> => {
      update.run({ at: at.toISOString().replace('Z', '+00:00'), ids: JSON.stringify(ids) });
    };
  };
  return { recordLastUsed: writer('lastUsedAt'), recordLastDeprecatedCall: writer('lastDeprecatedCallAt') };
}
