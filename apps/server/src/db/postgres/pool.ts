import pg from 'pg';
import { sessionUrl } from '../../config/database-url.js';
import type { DatabaseLimits } from '../../config/load.js';
import type { PostgresTarget } from '../options.js';
import { migratePostgres } from './migrate.js';

/**
 * Migrations run on a connection of their own, closed after: over `DATABASE_DIRECT_URL` when it is set, else over
 * `DATABASE_URL` (either works behind a transaction pooler: nothing in them outlives a transaction), and without the
 * request path's statement and lock timeouts: a replica waits for another's migration lock, and a migration may take
 * longer than any query should.
 */
export async function migrateOver(target: PostgresTarget, onError: (err: Error) => void): Promise<void> {
  const client = new pg.Client({ connectionString: sessionUrl(target), connectionTimeoutMillis: 5000 });
  client.on('error', onError);
  await client.connect();
  try {
    await migratePostgres(client);
  } finally {
    await client.end();
  }
}

/**
 * Whether the server accepts statement_timeout and lock_timeout in the startup packet. PgBouncer refuses startup
 * parameters it does not know ("unsupported startup parameter"): behind it only pg's client-side query timeout and the
 * pool timeout bound the waits, and the server-side timeouts belong on the role (`ALTER ROLE ... SET`).
 */
async function acceptsStartupTimeouts(url: string, timeouts: object, onRefused?: () => void): Promise<boolean> {
  if (Object.keys(timeouts).length === 0) return true;
  const probe = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000, ...timeouts });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return true;
  } catch (err) {
    if (!/unsupported startup parameter/i.test((err as Error).message)) throw err;
    onRefused?.();
    return false;
  } finally {
    await probe.end().catch(() => undefined);
  }
}

/**
 * The settings of every pooled connection. Every wait is bounded, set per connection in its startup packet (no session
 * SET, which PgBouncer's transaction mode would not keep): the pool's wait for a connection, the server's statement
 * and lock timeouts, and pg's own query timeout a little later, for a server that stopped answering altogether.
 */
export async function connectionSettings(
  target: PostgresTarget,
  limits: DatabaseLimits,
  onPoolerWithoutTimeouts?: () => void,
): Promise<pg.PoolConfig> {
  const serverTimeouts = {
    ...(limits.statementTimeoutMs > 0 && { statement_timeout: limits.statementTimeoutMs }),
    ...(limits.lockTimeoutMs > 0 && { lock_timeout: limits.lockTimeoutMs }),
  };
  return {
    connectionString: target.url,
    connectionTimeoutMillis: limits.poolTimeoutMs,
    keepAlive: true,
    ...(limits.statementTimeoutMs > 0 && { query_timeout: limits.statementTimeoutMs + 2000 }),
    ...((await acceptsStartupTimeouts(target.url, serverTimeouts, onPoolerWithoutTimeouts)) && serverTimeouts),
  };
}

/**
 * A pool whose connection errors go to `onError` (without a listener, an 'error' on an idle pooled connection, or on
 * one the pool has let go while it closes, is an uncaught exception; queries still see their own errors through their
 * promises), and whose `end()` waits until every connection's socket has really closed (pool.end() resolves before).
 */
export function trackedPool(
  settings: pg.PoolConfig,
  onError: (err: Error) => void,
): { pool: pg.Pool; end: () => Promise<void> } {
  const pool = new pg.Pool(settings);
  pool.on('error', onError);
  const open = new Set<Promise<void>>();
  pool.on('connect', (client) => {
    client.on('error', onError);
    const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
    open.add(ended);
    void ended.then(() => open.delete(ended));
  });
  return {
    pool,
    end: async () => {
      await pool.end();
      await Promise.all(open);
    },
  };
}
