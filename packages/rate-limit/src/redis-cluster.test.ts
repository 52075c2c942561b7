// The Redis store on a real Redis Cluster: the shared one of the run (global setup, 7001-7006) for exactness and the
// one-script decision, a private one (7011-7016) whose master this file kills for the failover.
import { startPrivateRedisCluster, waitFor, type PrivateRedisCluster } from '@animal-store/test-services';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLimiter } from './limiter.js';
import { DAY_MS, MINUTE_MS, minuteAndDay } from './windows.js';
import { createRedisClusterClient, parseClusterNodes } from './redis-cluster-client.js';
import { createRedisStore } from './redis-store.js';
import { createResilientStore } from './resilient-store.js';
import { deleteClusterPrefix, testPrefix } from './test-utils/redis.js';
import type { StoreRequest, WindowLimit } from './types.js';

const windows = (perMinute: number, perDay: number): WindowLimit[] => minuteAndDay({ perMinute, perDay });
const request = (key: string, w: WindowLimit[]): StoreRequest => ({ key, windows: w, ban: null });

async function ready(cluster: Cluster): Promise<Cluster> {
  if (cluster.status !== 'ready') {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`cluster not ready (${cluster.status})`)), 20_000);
      cluster.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  return cluster;
}

/** Which master's port holds `slot`, as the client sees the cluster now. */
async function masterPortOf(cluster: Cluster, slot: number): Promise<number> {
  const range = (await cluster.cluster('SLOTS')).find(([from, to]) => from <= slot && slot <= to);
  if (!range?.[2]) throw new Error(`no master holds slot ${slot}`);
  return range[2][1];
}

describe('parseClusterNodes', () => {
  it('reads host:port lists, IPv6 in brackets, and names the bad entry', () => {
    expect(parseClusterNodes('127.0.0.1:7001, redis-a:7002,[::1]:7003,')).toEqual([
      { host: '127.0.0.1', port: 7001 },
      { host: 'redis-a', port: 7002 },
      { host: '::1', port: 7003 },
    ]);
    expect(() => parseClusterNodes('')).toThrow('no host:port');
    expect(() => parseClusterNodes('127.0.0.1:7001,redis-b')).toThrow('"redis-b" is not host:port');
    expect(() => parseClusterNodes('a:0')).toThrow('"a:0" is not host:port');
    expect(() => parseClusterNodes('a:65536')).toThrow('not host:port');
    expect(() => parseClusterNodes('redis://a:7001')).toThrow('not host:port');
  });
});

describe('Redis store on a Redis Cluster (3 masters, 3 replicas)', () => {
  const prefix = testPrefix();
  const clients: Cluster[] = [];
  const client = async () => {
    const cluster = createRedisClusterClient({
      nodes: parseClusterNodes(inject('redisClusterNodes')),
      commandTimeout: 2_000,
    });
    clients.push(cluster);
    return ready(cluster);
  };

  afterAll(async () => {
    const [first] = clients;
    if (first) expect(await deleteClusterPrefix(first, prefix)).toBeGreaterThan(0);
    for (const c of clients) c.disconnect();
  });

  it('keeps every key of an identity in one slot and decides with one script call on that slot', async () => {
    const cluster = await client();
    const store = createRedisStore({ client: cluster, prefix });
    const keys = store.keysFor('key:42', [MINUTE_MS, DAY_MS]);
    const slots = await Promise.all(keys.map((k) => cluster.cluster('KEYSLOT', k)));
    expect(new Set(slots).size).toBe(1);

    // The slot's master counts script calls: one per decision (the first on a connection is EVAL, then EVALSHA).
    const port = await masterPortOf(cluster, slots[0] as number);
    const owner = cluster.nodes('master').find((node) => node.options.port === port)!;
    const calls = async () => {
      const stats = await owner.info('commandstats');
      const count = (name: string) => Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
      return count('eval') + count('evalsha');
    };
    await store.consume(request('key:42', windows(10, 100))); // loads the script on this connection
    const before = await calls();
    for (let i = 0; i < 5; i++) await store.consume(request('key:42', windows(10, 100)));
    expect((await calls()) - before).toBe(5);
  });

  it('is exact across replicas: 80 concurrent requests from two clients get exactly 60 through', async () => {
    const [a, b] = [
      createRedisStore({ client: await client(), prefix }),
      createRedisStore({ client: await client(), prefix }),
    ];
    const limiterA = createLimiter({ store: a, ban: false });
    const limiterB = createLimiter({ store: b, ban: false });
    const decisions = await Promise.all(
      Array.from({ length: 80 }, (_, i) => (i % 2 === 0 ? limiterA : limiterB).consume('key:free', windows(60, 1_000))),
    );
    expect(decisions.filter((d) => d.allowed)).toHaveLength(60);
    expect(decisions.filter((d) => !d.allowed && d.reason === 'rate_limited')).toHaveLength(20);
  });
});

describe('a master of the cluster fails over', () => {
  let cluster: PrivateRedisCluster | undefined;
  let client: Cluster | undefined;
  let observer: Cluster | undefined;
  beforeAll(async () => {
    cluster = await startPrivateRedisCluster();
  }, 120_000);
  afterAll(async () => {
    client?.disconnect();
    observer?.disconnect();
    await cluster?.release();
  }, 60_000);

  it('falls back to memory while the master is gone, then is shared again on the promoted replica', async () => {
    const nodes = parseClusterNodes(cluster!.nodes);
    const c = (client = await ready(createRedisClusterClient({ nodes })));
    // The test's own questions go through another client: the one under test has the store's 100 ms command timeout,
    // which fires whenever this process or a node is held up that long on a busy machine.
    const o = (observer = await ready(createRedisClusterClient({ nodes, commandTimeout: 5_000 })));
    const prefix = testPrefix();
    const fallbacks: unknown[] = [];
    let recovered = 0;
    const primary = createRedisStore({ client: c, prefix });
    const store = createResilientStore({
      primary,
      mode: 'fallback',
      retryIntervalMs: 100,
      onFallback: (err) => fallbacks.push(err),
      onRecover: () => recovered++,
    });
    const w = windows(10_000, 100_000);
    const slot = await o.cluster('KEYSLOT', primary.keysFor('key:7', [MINUTE_MS])[0]!);

    const first = await store.consume(request('key:7', w));
    expect(first.source).toBe('redis');
    // More decisions before the kill than the test makes after it, so that a new master which had lost them could not
    // reach the count at the end; the replica has them all before the kill.
    const charged = 500;
    const charger = createRedisStore({ client: o, prefix });
    for (let i = 0; i < charged; i++) await charger.consume(request('key:7', w));
    const port = await masterPortOf(o, slot);
    const master = o.nodes('master').find((node) => node.options.port === port)!;
    const replicated = async () => {
      const info = await master.info('replication');
      const offset = Number(/master_repl_offset:(\d+)/.exec(info)?.[1]);
      const acked = Number(/slave0:[^\r\n]*offset=(\d+)/.exec(info)?.[1]);
      return offset > 0 && acked >= offset;
    };
    await waitFor(`the replica of ${port} to catch up`, replicated, 10_000, 20);
    const before = await cluster!.clusterNodes(port);
    const lost = before.find((node) => node.port === port)!;
    const replica = before.find((node) => node.masterId === lost.id)!;
    expect(replica).toBeDefined();

    await cluster!.killNode(port);
    // Decisions go on meanwhile: from memory while the slot has no master, then from Redis on the new one.
    const sources: string[] = [];
    const deadline = Date.now() + 60_000;
    for (;;) {
      const result = await store.consume(request('key:7', w));
      expect(result.outcome).toBe('allowed');
      sources.push(result.source);
      if (result.source === 'redis' && sources.includes('memory')) break;
      if (Date.now() > deadline) throw new Error(`not shared again within 60 s: ${sources.slice(-5).join(',')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(fallbacks.length).toBeGreaterThanOrEqual(1);
    expect(recovered).toBeGreaterThanOrEqual(1);
    // The slot is now served by the former replica, which kept the count it had replicated. Ask the replica itself
    // (redis-cli): a client may still ask a node the failover's news has not reached, which names the dead master.
    const ownsSlot = async () =>
      (await cluster!.clusterNodes(replica.port)).some(
        (node) =>
          node.port === replica.port && node.role === 'master' && node.slots.some(([a, b]) => a <= slot && slot <= b),
      );
    await waitFor(`the replica on ${replica.port} to hold slot ${slot}`, ownsSlot, 10_000, 100);
    // A decision on a busy machine may still miss the 100 ms timeout and be answered from memory: ask again.
    let tries = 0;
    let after = first;
    const sharedAgain = async () => {
      tries++;
      after = await store.consume(request('key:7', w));
      return after.source === 'redis';
    };
    await waitFor('a decision answered by Redis', sharedAgain, 10_000, 100);
    expect(after.source).toBe('redis');
    // The new master counts on from the replicated decisions: every one before the kill, and every one since answered
    // by Redis. (Some answered from memory may have reached Redis too, after the store stopped waiting: at least.)
    // Without the replicated ones it could count at most the decisions made since the kill, fewer than `charged`.
    // The day's window, not the minute's, which may turn in the seconds this takes.
    expect(sources.length + tries).toBeLessThan(charged);
    const sharedSinceKill = sources.filter((source) => source === 'redis').length;
    expect(after.counts[1]).toBeGreaterThanOrEqual(1 + charged + sharedSinceKill + 1);
  }, 120_000);
});
