/**
 * What a scenario is, and what the runner lends it. A scenario measures (printing its progress), then, once every
 * chosen scenario has run, prints its part of the report; scenarios/index.ts lists them in the order they run.
 */
import type { PgBouncer, RedisCluster } from '@animal-store/test-services';
import type { BenchDatabase } from './databases.js';

export interface ScaleOut {
  /** PgBouncer in transaction mode in front of the run's PostgreSQL (6432). */
  pgbouncer: PgBouncer;
  /** A Redis Cluster of 3 masters with a replica each (7001-7006). */
  redisCluster: RedisCluster;
}

export interface RunContext {
  /** Keeps a database to drop at the end of the run (or on Ctrl-C); returns it. */
  track<T extends BenchDatabase>(db: T): T;
  /** PgBouncer and a Redis Cluster, started on first use and released at the end of the run. */
  scaleOut(): Promise<ScaleOut>;
  /**
   * One value per run and key, made on first use: what several scenarios share (e.g. fleet.ts's servers). Forgotten
   * when a scenario that runs alone starts, since its servers are stopped then.
   */
  shared<T>(key: string, make: () => Promise<T>): Promise<T>;
}

export type Out = (line?: string) => void;

export interface ScenarioResult {
  /** Saved in latest.json under these keys. */
  json: Record<string, unknown>;
  /** Prints the scenario's part of the report (to the console and latest.md), after every chosen scenario ran. */
  print(out: Out): void;
  /**
   * One line per target: `<target>: <figure> -> met` (or `NOT met`, or `not resolved` where the figure is an interval
   * that holds the target), listed under "Targets:" at the end.
   */
  targets?: string[];
  /** Files it wrote under results/, named in the run's last line. */
  files?: string[];
}

export interface Scenario {
  /** Its name in BENCH_ONLY. */
  name: string;
  /** One line for `--list`. */
  description: string;
  /** Runs with no server of an earlier scenario up: the runner stops them first. */
  alone?: boolean;
  /** Runs only when BENCH_ONLY names it (a long or special-purpose scenario), not in a plain `pnpm bench`. */
  optIn?: boolean;
  run(ctx: RunContext): Promise<ScenarioResult>;
}
