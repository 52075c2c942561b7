/**
 * The servers the throughput, latency and memory scenarios share, started once per run by the first of them: the
 * ceiling and floors, the hand-written reference, the service on SQLite + memory and on PostgreSQL + Redis (each also
 * with a feature off), through PgBouncer and on a Redis Cluster. All answer GET /v1/pets with the same page bytes.
 */
import { appServer, baselineServer, NO_COALESCING, NO_PAGE_CACHE, PLAIN_FLOOR } from './bench-servers.js';
import { postgresDatabase, sqliteDatabase, type BenchDatabase } from './databases.js';
import { CATALOGUE_SIZE, cannedPage } from './page.js';
import { auth } from './requests.js';
import type { RunContext } from './scenario.js';
import type { RunningServer } from './servers.js';

export interface Fleet {
  sqlite: BenchDatabase;
  postgres: BenchDatabase;
  ceiling: RunningServer;
  floor: RunningServer;
  floorPlain: RunningServer;
  handwritten: RunningServer;
  sqliteServer: RunningServer;
  sqliteUncached: RunningServer;
  pgServer: RunningServer;
  pgUncoalesced: RunningServer;
  pgbServer: RunningServer;
  clusterServer: RunningServer;
}

export function useFleet(ctx: RunContext): Promise<Fleet> {
  return ctx.shared('fleet', () => startFleet(ctx));
}

async function startFleet(ctx: RunContext): Promise<Fleet> {
  process.stdout.write('setup: SQLite and PostgreSQL databases, keys, servers ... ');
  const sqlite = ctx.track(await sqliteDatabase(CATALOGUE_SIZE));
  const postgres = ctx.track(await postgresDatabase(CATALOGUE_SIZE));
  const { pgbouncer, redisCluster } = await ctx.scaleOut();
  // Past one machine: the same database through PgBouncer in transaction mode, and Redis Cluster instead of Redis.
  const pooled = new URL(postgres.url);
  pooled.host = `127.0.0.1:${pgbouncer.port}`;
  const fleet: Fleet = {
    sqlite,
    postgres,
    ceiling: await baselineServer('ceiling', 'ceiling'),
    floor: await baselineServer('floor', 'floor'),
    floorPlain: await baselineServer('floor-plain', 'floor', PLAIN_FLOOR),
    handwritten: await baselineServer('handwritten', 'handwritten', {
      DATABASE_FILE: sqlite.url.slice('file:'.length),
    }),
    sqliteServer: await appServer('server-sqlite-memory', sqlite),
    sqliteUncached: await appServer('server-sqlite-memory-no-page-cache', sqlite, { env: NO_PAGE_CACHE }),
    pgServer: await appServer('server-postgres-redis', postgres, { redis: true }),
    pgUncoalesced: await appServer('server-postgres-redis-no-coalescing', postgres, {
      redis: true,
      env: NO_COALESCING,
    }),
    pgbServer: await appServer('server-pgbouncer-redis', { ...postgres, url: pooled.toString() }, { redis: true }),
    clusterServer: await appServer('server-postgres-redis-cluster', postgres, {
      env: { REDIS_CLUSTER_NODES: redisCluster.nodes },
    }),
  };
  await checkSameBytes(fleet);
  console.log('ok (all answer GET /v1/pets with the same page bytes)\n');
  return fleet;
}

async function checkSameBytes(f: Fleet): Promise<void> {
  const expected = cannedPage();
  const servers: Array<{ server: RunningServer; key?: string }> = [
    { server: f.floor },
    { server: f.floorPlain },
    { server: f.handwritten, key: f.sqlite.key },
    { server: f.sqliteServer, key: f.sqlite.key },
    { server: f.sqliteUncached, key: f.sqlite.key },
    { server: f.pgServer, key: f.postgres.key },
    { server: f.pgUncoalesced, key: f.postgres.key },
    { server: f.pgbServer, key: f.postgres.key },
    { server: f.clusterServer, key: f.postgres.key },
  ];
  for (const { server, key } of servers) {
    const res = await fetch(`${server.origin}/v1/pets`, key ? { headers: auth(key) } : {});
    const text = await res.text();
    if (res.status !== 200 || text !== expected)
      throw new Error(`${server.name}: GET /v1/pets did not answer the canned page (status ${res.status})`);
  }
}
