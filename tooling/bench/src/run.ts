/** One run of the suite: what its scenarios share, and everything it must undo at the end (or on Ctrl-C). */
import { usePgBouncer, useRedisCluster } from '@animal-store/test-services';
import type { BenchDatabase } from './databases.js';
import type { RunContext, ScaleOut } from './scenario.js';
import { stopAll } from './servers.js';

async function startScaleOut(): Promise<ScaleOut> {
  const [pgbouncer, redisCluster] = await Promise.allSettled([usePgBouncer(), useRedisCluster()]);
  if (pgbouncer.status === 'fulfilled' && redisCluster.status === 'fulfilled')
    return { pgbouncer: pgbouncer.value, redisCluster: redisCluster.value };
  for (const started of [pgbouncer, redisCluster]) if (started.status === 'fulfilled') await started.value.release();
  throw pgbouncer.status === 'rejected' ? pgbouncer.reason : (redisCluster as PromiseRejectedResult).reason;
}

export class Run implements RunContext {
  readonly #dbs: BenchDatabase[] = [];
  readonly #shared = new Map<string, Promise<unknown>>();
  #scaleOut: Promise<ScaleOut> | undefined;

  track<T extends BenchDatabase>(db: T): T {
    this.#dbs.push(db);
    return db;
  }

  scaleOut(): Promise<ScaleOut> {
    this.#scaleOut ??= startScaleOut();
    return this.#scaleOut;
  }

  shared<T>(key: string, make: () => Promise<T>): Promise<T> {
    let value = this.#shared.get(key) as Promise<T> | undefined;
    if (!value) {
      value = make();
      this.#shared.set(key, value);
    }
    return value;
  }

  /** Before a scenario that runs alone: every server stopped, what they were shared as forgotten. */
  async clearForAlone(): Promise<void> {
    await stopAll();
    this.#shared.clear();
  }

  /** Stops every server, drops every database, releases PgBouncer and the Redis Cluster; never throws. */
  async cleanup(): Promise<void> {
    await stopAll().catch((err: unknown) => console.error(`could not stop a server: ${String(err)}`));
    for (const db of this.#dbs.splice(0))
      await db.drop().catch((err: unknown) => console.error(`could not drop a bench database: ${String(err)}`));
    const scaleOut = this.#scaleOut;
    this.#scaleOut = undefined;
    if (scaleOut) {
      const released = await scaleOut.then(
        ({ pgbouncer, redisCluster }) => Promise.allSettled([pgbouncer.release(), redisCluster.release()]),
        () => [],
      );
      for (const r of released) if (r.status === 'rejected') console.error(`could not release: ${String(r.reason)}`);
    }
  }
}
