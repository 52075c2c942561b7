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
export {
  startOtlpReceiver,
  type AttributeValue,
  type OtlpReceiver,
  type OtlpReceiverOptions,
  type ReceivedSpan,
} from './otlp-receiver.js';
export { startBuiltServer, type BuiltServer, type BuiltServerOptions } from './built-server.js';
export {
  ephemeralPortRange,
  freePort,
  restartablePort,
  startChildService,
  type ChildService,
} from './child-service.js';
export { createPostgresDatabase, type PostgresDatabase } from './postgres-database.js';
export { waitFor } from './lifecycle.js';
