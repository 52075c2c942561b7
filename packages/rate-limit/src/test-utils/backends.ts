// The Redis and Redis Cluster a test file runs its stores on (vitest hooks, so not part of `./testing`).
import type { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, inject } from 'vitest';
import { createRedisClusterClient, parseClusterNodes } from '../redis-cluster-client.js';
import { connect, deleteClusterPrefix, deletePrefix, testPrefix } from './redis.js';

/** The file's connections, valid inside its tests, and the key prefix of its own that is deleted after them. */
export interface Backends {
  readonly prefix: string;
  redis(): Redis;
  cluster(): Cluster;
}

/**
 * Registers the file's hooks: before its tests, a client of the shared Redis and (with `cluster`) one of the run's
 * Redis Cluster (global setup: 3 masters with a replica each); after them, the prefix's keys deleted and both closed.
 */
export function useRedisBackends(options: { cluster?: boolean } = {}): Backends {
  const prefix = testPrefix();
  let redis: Redis | undefined;
  let cluster: Cluster | undefined;
  beforeAll(async () => {
    redis = await connect();
    if (!options.cluster) return;
    cluster = createRedisClusterClient({
      nodes: parseClusterNodes(inject('redisClusterNodes')),
      commandTimeout: 2_000,
    });
    await new Promise((resolve) => cluster!.once('ready', resolve));
  });
  afterAll(async () => {
    if (redis !== undefined) {
      await deletePrefix(redis, prefix);
      redis.disconnect();
    }
    if (cluster !== undefined) {
      await deleteClusterPrefix(cluster, prefix);
      cluster.disconnect();
    }
  });
  return { prefix, redis: () => redis!, cluster: () => cluster! };
}

/** One store on each backend, under the names the shared contract suites report. */
export interface Harness<S> {
  readonly name: string;
  store(): S;
}

/**
 * The harnesses of a shared contract suite (`describe.each`), its hooks registered: the memory store, and the Redis
 * store on the shared Redis and on the run's Redis Cluster, each made with the suite's clock.
 */
export function everyBackend<S>(
  memory: (options: { now: () => number }) => S,
  redis: (options: { client: Redis | Cluster; prefix: string; now: () => number }) => S,
  now: () => number,
): Harness<S>[] {
  const { prefix, ...backends } = useRedisBackends({ cluster: true });
  return [
    { name: 'memory store', store: () => memory({ now }) },
    { name: 'redis store', store: () => redis({ client: backends.redis(), prefix, now }) },
    { name: 'redis store on a Redis Cluster', store: () => redis({ client: backends.cluster(), prefix, now }) },
  ];
}
