import { Cluster, type ClusterOptions } from 'ioredis';

/** A seed node of a Redis Cluster. */
export interface ClusterNodeAddress {
  readonly host: string;
  readonly port: number;
}

/** Options of {@link createRedisClusterClient}. */
export interface RedisClusterClientOptions {
  /** Seed nodes: any reachable node tells the client the whole cluster's layout. */
  readonly nodes: readonly ClusterNodeAddress[];
  /** Per-command timeout in ms (default 100). */
  readonly commandTimeout?: number;
  /** Connect timeout per node in ms (default 1 000). */
  readonly connectTimeout?: number;
  /** Upper bound of the back-off while no seed node answers, in ms (default 1 000). */
  readonly maxReconnectDelayMs?: number;
  /** Receives connection errors (ioredis `error` events). Default: ignore (the store reports failures). */
  readonly onError?: (err: Error) => void;
  /** Extra ioredis Cluster options, applied last. */
  readonly clusterOptions?: ClusterOptions;
}

/**
 * Parses `host:port,host:port,...` (the server's `REDIS_CLUSTER_NODES`); IPv6 hosts in brackets (`[::1]:7001`).
 * Throws naming the entry that is not a `host:port` with a port of 1-65535.
 */
export function parseClusterNodes(text: string): ClusterNodeAddress[] {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  if (entries.length === 0) throw new Error('no host:port given');
  return entries.map((entry) => {
    const match = /^(?:\[([^\]]+)\]|([^:[\]/\s]+)):(\d{1,5})$/.exec(entry);
    const port = match ? Number(match[3]) : 0;
    if (!match || port < 1 || port > 65535) throw new Error(`"${entry}" is not host:port`);
    return { host: (match[1] ?? match[2])!, port };
  });
}

/**
 * Builds an ioredis Cluster client with the same behaviour as {@link createRedisClient}: commands fail fast instead
 * of queueing while the cluster is unknown (`enableOfflineQueue: false`, per-node `commandTimeout` 100 ms, no
 * per-request retries), and the client reconnects by itself with a capped back-off.
 *
 * During a failover, a command to the lost master is retried after a topology refresh (`retryDelayOnFailover`, at most
 * `maxRedirections` times) and a `CLUSTERDOWN` answer likewise; the rate-limit store's own timeout (see
 * {@link createResilientStore}) bounds what a request waits, and falls back meanwhile. A promoted replica answers the
 * store's first script on each new connection with a plain `EVAL` (ioredis sends the script body once per socket and
 * resends it on `NOSCRIPT`), so a failover never needs a script to be loaded again by hand.
 */
export function createRedisClusterClient(options: RedisClusterClientOptions): Cluster {
  const maxDelay = options.maxReconnectDelayMs ?? 1_000;
  const cluster = new Cluster(
    options.nodes.map(({ host, port }) => ({ host, port })),
    {
      enableOfflineQueue: false,
      // While no seed node answers: try again with a capped back-off, forever (null would give up for good).
      clusterRetryStrategy: (attempt: number) => Math.min(50 * 2 ** Math.min(attempt, 10), maxDelay),
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 100,
      maxRedirections: 16,
      redisOptions: {
        commandTimeout: options.commandTimeout ?? 100,
        connectTimeout: options.connectTimeout ?? 1_000,
        maxRetriesPerRequest: 0,
        autoResubscribe: false,
      },
      ...options.clusterOptions,
    },
  );
  cluster.on('error', options.onError ?? (() => undefined));
  return cluster;
}
