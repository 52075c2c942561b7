/**
 * `count` more keys like the one the key CLI created (same plan, limits and any other column, copied by the database
 * itself, so columns added later are copied too), each with its own raw key and hash. Keys are made the way the CLI
 * makes them in the legacy format (`ask_` + 43 base64url characters, SHA-256 hex stored; still accepted, and cached
 * after their first lookup as every key is); 40 CLI runs would cost a minute of start-ups.
 */
import { hash, randomBytes } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';

type KeyRow = { raw: string; hash: string; prefix: string };

/** The columns a copy takes from the CLI's key: all but those that identify a key. */
const copied = (columns: string[]) =>
  columns.filter((c) => !['id', 'hash', 'prefix', 'name'].includes(c)).map((c) => `"${c}"`);

const insertCopy = (columns: string[], placeholders: [string, string, string]) =>
  `INSERT INTO "ApiKey" ("hash", "prefix", "name", ${columns.join(', ')}) SELECT ${placeholders.join(', ')}, ${columns.join(', ')} FROM "ApiKey" ORDER BY "id" LIMIT 1`;

export async function moreKeys(databaseUrl: string, count: number): Promise<string[]> {
  const raws = Array.from({ length: count }, () => `ask_${randomBytes(32).toString('base64url')}`);
  const rows = raws.map((raw) => ({ raw, hash: hash('sha256', raw, 'hex'), prefix: raw.slice(0, 12) }));
  if (databaseUrl.startsWith('file:')) copySqlite(databaseUrl.slice('file:'.length), rows);
  else await copyPostgres(databaseUrl, rows);
  return raws;
}

function copySqlite(file: string, rows: KeyRow[]): void {
  const db = new BetterSqlite3(file, { timeout: 5000 });
  try {
    const columns = (db.prepare('PRAGMA table_info("ApiKey")').all() as Array<{ name: string }>).map((c) => c.name);
    const insert = db.prepare(insertCopy(copied(columns), ['?', '?', '?']));
    db.transaction(() => rows.forEach((r, i) => insert.run(r.hash, r.prefix, `bench-${i}`)))();
  } finally {
    db.close();
  }
}

async function copyPostgres(url: string, rows: KeyRow[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows: cols } = await client.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns WHERE table_name = 'ApiKey' AND table_schema = current_schema()`,
    );
    const sql = insertCopy(copied(cols.map((c) => c.column_name)), ['$1', '$2', '$3']);
    for (const [i, r] of rows.entries()) await client.query(sql, [r.hash, r.prefix, `bench-${i}`]);
  } finally {
    await client.end();
  }
}
