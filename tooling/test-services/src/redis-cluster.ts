import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exclusive, pidFrom, run, shared, stopPid, waitFor } from './lifecycle.js';

/** Options of {@link useRedisCluster} and {@link startPrivateRedisCluster}. */
export interface RedisClusterOptions {
  /** The nodes' ports on 127.0.0.1 (default 7001-7006): the first third... are chosen masters by `redis-cli`. */
  ports?: readonly number[];
  /** Replicas per master (default 1: 6 nodes are 3 masters and 3 replicas). */
  replicas?: number;
  /** `cluster-node-timeout` (default 5 000 ms shared, 2 000 ms private): how long a silent master takes to fail over. */
  nodeTimeoutMs?: number;
}

/** A node as `CLUSTER NODES` describes it. */
export interface ClusterNode {
  id: string;
  port: number;
  role: 'master' | 'replica';
  /** Flagged as failing (`fail` or `fail?`) by the node asked. */
  failing: boolean;
  /** Master id of a replica. */
  masterId: string | undefined;
  /** Slot ranges of a master, e.g. [[0, 5460]]. */
  slots: Array<[number, number]>;
}

/** A running Redis Cluster; see {@link useRedisCluster}. */
export interface RedisCluster {
  readonly ports: readonly number[];
  /** The seed nodes as the server's `REDIS_CLUSTER_NODES` takes them: `127.0.0.1:7001,127.0.0.1:7002,...`. */
  readonly nodes: string;
  /** This run's use ends (shared: the last user stops the nodes; private: stops them). */
  release(): Promise<void>;
}

/** A cluster this run owns alone; its nodes may be killed. See {@link startPrivateRedisCluster}. */
export interface PrivateRedisCluster extends RedisCluster {
  /** The cluster as the node on `askPort` sees it. */
  clusterNodes(askPort: number): Promise<ClusterNode[]>;
  /** Kills (SIGKILL) the node on `port`, as a crash would. */
  killNode(port: number): Promise<void>;
}

export const REDIS_CLUSTER_PORTS = [7001, 7002, 7003, 7004, 7005, 7006] as const;
export const PRIVATE_REDIS_CLUSTER_PORTS = [7011, 7012, 7013, 7014, 7015, 7016] as const;

const cli = (port: number, ...args: string[]) =>
  run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], 10_000);

export async function clusterNodes(askPort: number): Promise<ClusterNode[]> {
  const out = await cli(askPort, 'CLUSTER', 'NODES');
  return out
    .trim()
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => {
      const [id, address, flags, master, , , , , ...slots] = line.split(' ');
      const flagSet = new Set((flags ?? '').split(','));
      return {
        id: id!,
        port: Number.parseInt((address ?? '').split('@')[0]!.split(':').pop()!, 10),
        role: flagSet.has('master') ? 'master' : 'replica',
        failing: flagSet.has('fail') || flagSet.has('fail?'),
        masterId: master === '-' ? undefined : master,
        slots: slots
          .filter((s) => !s.startsWith('['))
          .map((s) => {
            const [from, to] = s.split('-').map(Number);
            return [from!, to ?? from!] as [number, number];
          }),
      };
    });
}

/** The cluster is whole: every node sees `cluster_state:ok` and all nodes, every replica's link to its master is up. */
async function whole(ports: readonly number[]): Promise<boolean> {
  try {
    for (const port of ports) {
      const info = await cli(port, 'CLUSTER', 'INFO');
      if (
        !info.includes('cluster_state:ok') ||
        !info.includes(`cluster_known_nodes:${ports.length}`) ||
        !info.includes('cluster_slots_assigned:16384')
      )
        return false;
      const replication = await cli(port, 'INFO', 'replication');
      if (replication.includes('role:slave') && !replication.includes('master_link_status:up')) return false;
    }
    return true;
  } catch {
    return false;
  }
}

/** One `redis-server --cluster-enabled yes` node, daemonized, no persistence, its state in `dir`. */
function startNode(port: number, dir: string, nodeTimeoutMs: number): Promise<string> {
  return run('redis-server', [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    'nodes.conf',
    '--cluster-node-timeout',
    String(nodeTimeoutMs),
    // A replica takes over however long its master has been gone (the default refuses after 10 node timeouts).
    '--cluster-replica-validity-factor',
    '0',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'no',
    '--daemonize',
    'yes',
    '--pidfile',
    join(dir, 'redis.pid'),
    '--logfile',
    join(dir, 'redis.log'),
  ]);
}

/** Joins the nodes into one cluster; redis-cli chooses the masters (`replicas` replicas each) and spreads the slots. */
function createCluster(ports: readonly number[], replicas: number): Promise<string> {
  return run(
    'redis-cli',
    [
      '--cluster',
      'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    ],
    60_000,
  );
}

function instance(options: RedisClusterOptions, defaults: { ports: readonly number[]; nodeTimeoutMs: number }) {
  const ports = options.ports ?? defaults.ports;
  const dir = join(tmpdir(), `animal-store-redis-cluster-${ports[0]}`);
  const nodeDir = (port: number) => join(dir, String(port));
  const pidOf = (port: number) => pidFrom(join(nodeDir(port), 'redis.pid'), `:${port}`);
  const stopNode = async (port: number, signal: NodeJS.Signals) => {
    const pid = pidOf(port);
    if (pid !== undefined) await stopPid(pid, signal);
    rmSync(nodeDir(port), { recursive: true, force: true });
  };
  return {
    dir,
    ports,
    pidOf,
    healthy: async () => ports.every((port) => pidOf(port) !== undefined) && (await whole(ports)),
    async start() {
      await Promise.all(ports.map((port) => stopNode(port, 'SIGKILL')));
      for (const port of ports) {
        mkdirSync(nodeDir(port), { recursive: true });
        await startNode(port, nodeDir(port), options.nodeTimeoutMs ?? defaults.nodeTimeoutMs);
      }
      await waitFor(
        'Redis Cluster nodes to answer',
        async () =>
          (await Promise.all(ports.map((p) => cli(p, 'PING').catch(() => '')))).every((r) => r.trim() === 'PONG'),
        10_000,
      );
      await createCluster(ports, options.replicas ?? 1);
      await waitFor(`Redis Cluster on ${ports.join(',')} to be whole`, () => whole(ports), 60_000, 200);
    },
    stop: async () => {
      await Promise.all(ports.map((port) => stopNode(port, 'SIGTERM')));
    },
    base: (release: () => Promise<void>): RedisCluster => ({
      ports,
      nodes: ports.map((p) => `127.0.0.1:${p}`).join(','),
      release,
    }),
  };
}

/**
 * A Redis Cluster of `redis-server --cluster-enabled yes` nodes (3 masters with a replica each by default) on 7001-7006,
 * no persistence, state in a temporary folder. Shared by the test runs of the machine like {@link usePgBouncer}:
 * started when not whole (a crashed run's nodes are killed first), stopped when the last run releases it. Never kill
 * its nodes: other runs use them; a test that kills nodes uses {@link startPrivateRedisCluster}.
 */
export function useRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const cluster = instance(options, { ports: REDIS_CLUSTER_PORTS, nodeTimeoutMs: 5_000 });
  return shared(cluster.dir, { ...cluster, handle: cluster.base });
}

/**
 * A Redis Cluster this run owns alone (7011-7016 by default), for tests that kill nodes: waits while another run
 * holds it, starts it afresh, and `release` stops it.
 */
export function startPrivateRedisCluster(options: RedisClusterOptions = {}): Promise<PrivateRedisCluster> {
  const cluster = instance(options, { ports: PRIVATE_REDIS_CLUSTER_PORTS, nodeTimeoutMs: 2_000 });
  return exclusive(cluster.dir, {
    ...cluster,
    handle: (release) => ({
      ...cluster.base(release),
      clusterNodes,
      async killNode(port: number) {
        const pid = cluster.pidOf(port);
        if (pid === undefined) throw new Error(`no node of this cluster runs on ${port}`);
        await stopPid(pid, 'SIGKILL');
      },
    }),
  });
}
