#!/usr/bin/env node
// Holds the scale-out test services up by hand (for the bench or a manual run): `animal-store-test-services` starts
// PgBouncer on 6432 and the Redis Cluster on 7001-7006 (or joins the running ones), prints their addresses, and
// releases them on Ctrl-C / SIGTERM (the last user stops them).
import { usePgBouncer } from './pgbouncer.js';
import { useRedisCluster } from './redis-cluster.js';

const pgbouncer = await usePgBouncer();
const cluster = await useRedisCluster();
console.log(`PgBouncer (transaction mode): ${pgbouncer.url('<database>')}`);
console.log(`REDIS_CLUSTER_NODES=${cluster.nodes}`);
const stop = () => {
  Promise.all([pgbouncer.release(), cluster.release()]).then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
setInterval(() => undefined, 1 << 30);
