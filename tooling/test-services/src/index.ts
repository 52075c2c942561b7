export { usePgBouncer, PGBOUNCER_PORT, type PgBouncer, type PgBouncerOptions } from './pgbouncer.js';
export {
  clusterNodes,
  startPrivateRedisCluster,
  useRedisCluster,
  PRIVATE_REDIS_CLUSTER_PORTS,
  REDIS_CLUSTER_PORTS,
  type ClusterNode,
  type PrivateRedisCluster,
  type RedisCluster,
  type RedisClusterOptions,
} from './redis-cluster.js';
