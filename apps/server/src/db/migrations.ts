import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVER_ROOT } from '../config/server-root.js';

/**
 * The SQL migrations kept in Prisma's folder layout (prisma/<provider>/migrations/<timestamp>_<name>/migration.sql),
 * recorded in a `_prisma_migrations` table shaped as Prisma Migrate's, so `prisma migrate deploy` sees the same history
 * where its engine can run. Each migration runs in its own transaction with its record (sqlite/migrate.ts,
 * postgres/migrate.ts).
 */
export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export function migrationsDir(provider: 'sqlite' | 'postgresql'): string {
  return join(SERVER_ROOT, 'prisma', provider, 'migrations');
}

export function readMigrations(dir: string): Migration[] {
  if (!existsSync(dir)) throw new Error(`migrations folder missing: ${dir}`);
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, 'migration.sql')))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

/** A row of `_prisma_migrations`, as both drivers read it. */
export type Applied = { migration_name: string; checksum: string; finished_at: unknown; rolled_back_at: unknown };

/** Reads the history, as both drivers do. */
export const APPLIED_SQL = 'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"';

/** Which migrations still have to run; refuses a history that was edited or left half-applied. */
export function pending(all: Migration[], applied: Applied[]): Migration[] {
  const done = new Map<string, Applied>();
  for (const row of applied) {
    if (row.rolled_back_at != null) continue;
    if (row.finished_at == null) {
      throw new Error(
        `migration ${row.migration_name} was started but did not finish; resolve it before starting the service`,
      );
    }
    done.set(row.migration_name, row);
  }
  for (const row of done.values()) {
    const local = all.find((m) => m.name === row.migration_name);
    if (!local) throw new Error(`the database has migration ${row.migration_name}, which this build does not know`);
    if (local.checksum !== row.checksum)
      throw new Error(`migration ${row.migration_name} was modified after it was applied`);
  }
  return all.filter((m) => !done.has(m.name));
}
