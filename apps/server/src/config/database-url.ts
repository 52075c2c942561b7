import { isAbsolute, resolve } from 'node:path';
import { SERVER_ROOT } from './server-root.js';

export type DatabaseTarget =
  | { provider: 'sqlite'; url: string; file: string }
  | {
      provider: 'postgresql';
      /** What the pool uses: the database, or a pooler (PgBouncer in transaction mode) in front of it. */
      url: string;
      /**
       * `DATABASE_DIRECT_URL`: the same database without the pooler, for work that needs a session of its own
       * (migrations at start, `LISTEN`); see {@link sessionUrl}.
       */
      directUrl?: string;
    };

/** The URL for work that needs a PostgreSQL session of its own: `DATABASE_DIRECT_URL` when set, else `DATABASE_URL`. */
export function sessionUrl(target: Extract<DatabaseTarget, { provider: 'postgresql' }>): string {
  return target.directUrl ?? target.url;
}

export const isPostgresUrl = (url: string): boolean => {
  if (!/^postgres(ql)?:\/\//.test(url)) return false;
  try {
    new URL(url);
    return true;
  } catch {
    return false;
  }
};

/** `file:...` selects SQLite (relative paths against apps/server); `postgres(ql)://...` selects PostgreSQL. */
export function parseDatabaseUrl(url: string): DatabaseTarget {
  if (url.startsWith('file:')) {
    const path = url.slice('file:'.length).replace(/^\/\/(?=\/)/, '');
    if (path.length === 0) throw new Error('DATABASE_URL must name a file after file:');
    const file = path === ':memory:' ? path : isAbsolute(path) ? path : resolve(SERVER_ROOT, path);
    return { provider: 'sqlite', url: `file:${file}`, file };
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    if (!isPostgresUrl(url)) throw new Error('DATABASE_URL is not a valid postgres URL');
    return { provider: 'postgresql', url };
  }
  throw new Error('DATABASE_URL must start with file: (SQLite) or postgres:// / postgresql:// (PostgreSQL)');
}
