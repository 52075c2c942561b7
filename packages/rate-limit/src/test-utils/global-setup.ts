import { useRedisCluster } from '@animal-store/test-services';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The test Redis Cluster's seed nodes: `127.0.0.1:7001,...`. */
    redisClusterNodes: string;
  }
}

/** Once per run: the Redis Cluster (joined if another run has it up), released at the end. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cluster = await useRedisCluster();
  project.provide('redisClusterNodes', cluster.nodes);
  return () => cluster.release();
}
