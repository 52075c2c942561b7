/**
 * `count` more keys like the one the key CLI created (same plan, limits and any other column, copied by the database
 * itself, so columns added later are copied too), each with its own raw key and hash; or on another self-service plan,
 * whose limits are the plan's (the custom ones left unset). Keys are made the way the CLI makes them in the legacy
 * format (`ask_` + 43 base64url characters, SHA-256 hex stored; still accepted, and cached after their first lookup as
 * every key is); 40 CLI runs would cost a minute of start-ups, and the overload bench wants thousands of keys.
 */
import { hash, randomBytes } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';

type KeyRow = { raw: string; hash: string; prefix: string };

/** A self-service plan for the copies: the key's own limits do not apply to it, so they are left unset. */
export type CopyPlan = 'free' | 'pro' | 'business';
const CUSTOM_LIMITS = ['perMinute', 'perDay', 'concurrentRequests'];

/** The columns a copy takes from the CLI's key: all but those that identify a key (and those `plan` replaces). */
const copied = (columns: string[], plan: CopyPlan | undefined) =>
  columns
    .filter((c) => !['id', 'hash', 'prefix', 'name'].includes(c))
    .filter((c) => plan === undefined || (c !== 'plan' && !CUSTOM_LIMITS.includes(c)))
    .map((c) => `"${c}"`);

/** INSERT … SELECT of one copy per row of `source` (hash, prefix, name), from the CLI's key. */
const insertCopy = (columns: string[], plan: CopyPlan | undefined, source: string) => {
  const planColumns = plan === undefined ? '' : `, "plan"`;
  const planValue = plan === undefined ? '' : `, '${plan}'`;
  return (
    `INSERT INTO "ApiKey" ("hash", "prefix", "name"${planColumns}, ${columns.join(', ')}) ` +
    `SELECT s.h, s.p, s.n${planValue}, ${columns.map((c) => `k.${c}`).join(', ')} FROM ${source} ` +
    `CROSS JOIN (SELECT * FROM "ApiKey" ORDER BY "id" LIMIT 1) AS k`
  );
};

export async function moreKeys(databaseUrl: string, count: number, plan?: CopyPlan): Promise<string[]> {
  const raws = Array.from({ length: count }, () => `ask_${randomBytes(32).toString('base64url')}`);
  const rows = raws.map((raw) => ({ raw, hash: hash('sha256', raw, 'hex'), prefix: raw.slice(0, 12) }));
  if (databaseUrl.startsWith('file:')) copySqlite(databaseUrl.slice('file:'.length), rows, plan);
  else await copyPostgres(databaseUrl, rows, plan);
  return raws;
}

function copySqlite(file: string, rows: KeyRow[], plan: CopyPlan | undefined): void {
  const db = new BetterSqlite3(file, { timeout: 5000 });
  try {
    const columns = (db.prepare('PRAGMA table_info("ApiKey")').all() as Array<{ name: string }>).map((c) => c.name);
    const insert = db.prepare(insertCopy(copied(columns, plan), plan, '(SELECT ? AS h, ? AS p, ? AS n) AS s'));
    db.transaction(() => rows.forEach((r, i) => insert.run(r.hash, r.prefix, `bench-${i}`)))();
  } finally {
    db.close();
  }
}

const randomOffset = () => 1_000_000 + (randomBytes(4).readUInt32BE() % 1_000_000_000);

/** Rows per statement: thousands of keys in a few round trips. */
const PG_BATCH = 1000;

async function copyPostgres(url: string, rows: KeyRow[], plan: CopyPlan | undefined): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows: cols } = await client.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns WHERE table_name = 'ApiKey' AND table_schema = current_schema()`,
    );
    // Keys of a self-service plan count against its daily quota in the shared Redis, under their id: ids from a random
    // offset make each run's keys fresh identities there.
    if (plan !== undefined)
      await client.query(`SELECT setval(pg_get_serial_sequence('"ApiKey"', 'id'), $1::bigint)`, [randomOffset()]);
    const source = 'unnest($1::text[], $2::text[], $3::text[]) AS s(h, p, n)';
    const sql = insertCopy(
      copied(
        cols.map((c) => c.column_name),
        plan,
      ),
      plan,
      source,
    );
    for (let from = 0; from < rows.length; from += PG_BATCH) {
      const batch = rows.slice(from, from + PG_BATCH);
      await client.query(sql, [
        batch.map((r) => r.hash),
        batch.map((r) => r.prefix),
        batch.map((_, i) => `bench-${from + i}`),
      ]);
    }
  } finally {
    await client.end();
  }
}
