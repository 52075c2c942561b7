import { randomUUID } from 'node:crypto';
import type BetterSqlite3 from 'better-sqlite3';
import { APPLIED_SQL, migrationsDir, pending, readMigrations, type Applied } from '../migrations.js';

const SQLITE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    TEXT PRIMARY KEY NOT NULL,
    "checksum"              TEXT NOT NULL,
    "finished_at"           DATETIME,
    "migration_name"        TEXT NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        DATETIME,
    "started_at"            DATETIME NOT NULL DEFAULT current_timestamp,
    "applied_steps_count"   INTEGER UNSIGNED NOT NULL DEFAULT 0
)`;

/** SQLite: one IMMEDIATE transaction holds the write lock, so a server and the key CLI starting together do not race. */
export function migrateSqlite(db: BetterSqlite3.Database, dir = migrationsDir('sqlite')): string[] {
  const all = readMigrations(dir);
  const run = db.transaction(() => {
    db.exec(SQLITE_TABLE);
    const todo = pending(all, db.prepare(APPLIED_SQL).all() as Applied[]);
    const insert = db.prepare(
      'INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES (?, ?, ?, ?, ?, 1)',
    );
    for (const m of todo) {
      const started = Date.now();
      db.exec(m.sql);
      insert.run(randomUUID(), m.checksum, Date.now(), m.name, started);
    }
    return todo.map((m) => m.name);
  });
  return run.immediate();
}
