/** The servers a scenario measures: the built service on a bench database, and the baselines of baselines/. */
import { join } from 'node:path';
import type { BenchDatabase } from './databases.js';
import { BENCH_DIST, SERVER_MAIN } from './paths.js';
import { startServer, type RunningServer } from './servers.js';
import { settings } from './settings.js';

export interface AppServerOptions {
  /** The Redis limiter on the run's Redis (BENCH_REDIS_URL); the memory limiter otherwise. */
  redis?: boolean;
  /** More of the server's environment (e.g. a setting turned off, REDIS_CLUSTER_NODES). */
  env?: Record<string, string>;
  /** Node's own flags (e.g. --cpu-prof). */
  nodeArgs?: string[];
  /** Another build of the server (its apps/server/dist); this run's by default. */
  serverDist?: string;
}

/** The SQLite list page cache turned off: every list reads the database (the figure without the cache, and growth). */
export const NO_PAGE_CACHE = { PAGE_CACHE_ENTRIES: '0' };
/** PostgreSQL read coalescing turned off: one query per request (the figure without it). */
export const NO_COALESCING = { READ_COALESCING: 'false' };

/**
 * Load shedding off: a closed loop that saturates the server is overload to it, and it would shed some of what the
 * throughput and latency scenarios measure; the overload scenario turns it on and off itself.
 */
export const NO_SHEDDING = { LOAD_SHEDDING: 'false' };

export function appServer(name: string, db: BenchDatabase, options: AppServerOptions = {}): Promise<RunningServer> {
  const redis = options.redis ? { REDIS_URL: settings.redisUrl } : { REDIS_URL: '' };
  return startServer(
    name,
    options.serverDist ? join(options.serverDist, 'main.js') : SERVER_MAIN,
    { DATABASE_URL: db.url, LOG_LEVEL: settings.logLevel, ...NO_SHEDDING, ...redis, ...options.env },
    options.nodeArgs,
  );
}

/** ceiling: bare node:http; floor: Express on the service's server construction; handwritten: the reference list. */
export type Baseline = 'ceiling' | 'floor' | 'handwritten';

/** The floor on Express's own `app.listen` (baselines/floor.ts). */
export const PLAIN_FLOOR = { FLOOR_SERVER: 'plain' };

export function baselineServer(
  name: string,
  baseline: Baseline,
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
): Promise<RunningServer> {
  return startServer(name, join(BENCH_DIST, `baselines/${baseline}.js`), env, nodeArgs);
}
