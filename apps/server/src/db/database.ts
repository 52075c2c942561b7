import { isTransient } from '../errors/dependency-failure.js';
import type { DatabaseConfig, OpenDatabaseOptions } from './options.js';
import { openPostgres } from './postgres/open.js';
import { openSqlite } from './sqlite/open.js';
import type { Database } from './types.js';

export type { DatabaseConfig, OpenDatabaseOptions } from './options.js';

/**
 * Opens the database the configuration names, migrating it first. Handlers receive the returned stores and nothing
 * else. A caller without a configuration takes one from `loadConfig({ DATABASE_URL })`: every default is there.
 */
export function openDatabase(config: DatabaseConfig, options: OpenDatabaseOptions = {}): Promise<Database> {
  const target = config.database;
  return target.provider === 'sqlite' ? openSqlite(target, config, options) : openPostgres(target, config, options);
}

/**
 * Opens the database, retrying while the error is transient (errors/dependency-failure.ts: unreachable, busy or a
 * timeout, unlike a wrong setup or a full disk), for at most `timeoutMs`; then gives up with the last error.
 */
export async function openDatabaseWithRetry(
  config: DatabaseConfig,
  options: OpenDatabaseOptions & { timeoutMs: number; onRetry?: (err: unknown, attempt: number) => void },
): Promise<Database> {
  const deadline = Date.now() + options.timeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await openDatabase(config, options);
    } catch (err) {
      if (!isTransient(err) || Date.now() + 1000 > deadline) throw err;
      options.onRetry?.(err, attempt);
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(1000 * attempt, 5000, Math.max(deadline - Date.now(), 0))),
      );
    }
  }
}
