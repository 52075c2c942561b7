import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** A database of its own on a PostgreSQL server; see {@link createPostgresDatabase}. */
export interface PostgresDatabase {
  readonly name: string;
  /** The admin URL with the new database as its path. */
  readonly url: string;
  /** Drops the database (its sessions first); safe to call twice. */
  drop(): Promise<void>;
}

/**
 * A fresh, empty database `<prefix>_<random hex>` on the server of `adminUrl` (a role that may create databases, e.g.
 * the machine's trust-auth `postgres`). `drop` first lets sessions closed a moment ago finish leaving, so no client of
 * this process sees its connection terminated, then drops the database WITH (FORCE).
 */
export async function createPostgresDatabase(adminUrl: string, prefix: string): Promise<PostgresDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await withClient(adminUrl, (admin) => admin.query(`CREATE DATABASE ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: () =>
      withClient(adminUrl, async (admin) => {
        for (let i = 0; i < 50; i++) {
          const { rows } = await admin.query<{ n: string }>(
            'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1',
            [name],
          );
          if (rows[0]?.n === '0') break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }),
  };
}

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}
