import { usePgBouncer, useRedisCluster } from '@animal-store/test-services';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** PgBouncer in transaction mode in front of the machine's PostgreSQL (see helpers.ts, provider `pgbouncer`). */
    pgbouncerPort: number;
    /** The test Redis Cluster's seed nodes, as `REDIS_CLUSTER_NODES` takes them. */
    redisClusterNodes: string;
  }
}

/** Once per run: PgBouncer and the Redis Cluster (joined if another run has them up), released at the end. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [pgbouncer, cluster] = await Promise.all([usePgBouncer(), useRedisCluster()]);
  project.provide('pgbouncerPort', pgbouncer.port);
  project.provide('redisClusterNodes', cluster.nodes);
  return async () => {
    await Promise.all([pgbouncer.release(), cluster.release()]);
  };
}
