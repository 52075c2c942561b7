/**
 * Benchmark: our stores vs rate-limiter-flexible (two windows via RateLimiterUnion),
 * measured in the same run in alternating A/B rounds; prints medians and ours/theirs.
 *
 *   node tooling/bench/dist/rate-limit.js     (after pnpm build; REDIS_URL, default redis://127.0.0.1:6379); pnpm bench runs it
 *
 * All requests are within limits (allowed path) so both libraries do the same work:
 * check + charge two windows per decision.
 */
import { randomBytes } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterUnion } from 'rate-limiter-flexible';
import {
  createLimiter,
  createMemoryStore,
  createRedisClusterClient,
  createRedisStore,
  DAY_MS,
  parseClusterNodes,
  MINUTE_MS,
  type BanPolicy,
  type WindowLimit,
} from '@animal-store/rate-limit';
import { abRounds, IDENTITIES, printTable, runConcurrent, runSequential, type Row } from './rate-limit-rounds.js';
import { fmtInt as fmt } from './stats.js';

const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
/** Seed nodes of a Redis Cluster (pnpm bench starts one on 7001-7006): adds the cluster row when set. */
const REDIS_CLUSTER_NODES = process.env['REDIS_CLUSTER_NODES'];
const ROUNDS = { rounds: 5, deadline: Date.now() + 50_000 }; // a hard bound on the total run time
const MEMORY_OPS = 200_000;
const REDIS_OPS = 20_000;
const IN_FLIGHT = 50;
const PER_MINUTE = 1_000_000_000;
const PER_DAY = 1_000_000_000;

const WINDOWS: WindowLimit[] = [
  { name: 'minute', limit: PER_MINUTE, windowMs: MINUTE_MS },
  { name: 'day', limit: PER_DAY, windowMs: DAY_MS },
];
/** The service's ban rule (more than 10 refusals in a clock minute ban for 15 minutes): the limiter has no default. */
const BAN: BanPolicy = { maxRefusals: 10, windowMs: MINUTE_MS, durationMs: 900_000 };

async function deleteMatching(client: Redis, pattern: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, found] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (found.length > 0) deleted += await client.del(...found);
  } while (cursor !== '0');
  return deleted;
}

/** Ours (one script call per decision) and rate-limiter-flexible's union of two windows, each on its own client. */
function contenders(ours: Redis | Cluster, theirs: Redis | Cluster, prefix: string) {
  const window = (suffix: string, points: number, duration: number) =>
    new RateLimiterRedis({ storeClient: theirs, keyPrefix: `${prefix}rlflx-${suffix}`, points, duration });
  return {
    limiter: createLimiter({ store: createRedisStore({ client: ours, prefix: `${prefix}ours:` }), ban: BAN }),
    union: new RateLimiterUnion(window('m', PER_MINUTE, 60), window('d', PER_DAY, 86_400)),
  };
}

const ready = (client: Cluster) =>
  new Promise<void>((resolve, reject) => {
    if (client.status === 'ready') return resolve();
    const timer = setTimeout(() => reject(new Error('Redis Cluster not ready within 20 s')), 20_000);
    client.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });

/** The same decisions on a Redis Cluster: ours one script call on the identity's slot, rlflx one per window. */
async function clusterRow(seeds: string, prefix: string): Promise<Row> {
  const nodes = parseClusterNodes(seeds);
  const oursClient = createRedisClusterClient({ nodes, commandTimeout: 2_000 });
  const theirsClient = new Cluster(nodes.map((n) => ({ ...n })));
  await Promise.all([ready(oursClient), ready(theirsClient)]);
  try {
    const { limiter, union } = contenders(oursClient, theirsClient, prefix);
    return await abRounds(
      `redis cluster: decisions/s (${IN_FLIGHT} in flight)`,
      () => runConcurrent((k) => limiter.consume(k, WINDOWS), REDIS_OPS, IN_FLIGHT),
      () => runConcurrent((k) => union.consume(k), REDIS_OPS, IN_FLIGHT),
      ROUNDS,
    );
  } finally {
    let removed = 0;
    for (const node of oursClient.nodes('master')) {
      let cursor = '0';
      do {
        const [next, found] = await node.scan(cursor, 'MATCH', `*${prefix}*`, 'COUNT', 1000);
        cursor = next;
        for (const key of found) removed += await node.del(key); // one by one: keys of different slots
      } while (cursor !== '0');
    }
    console.log(`(cleaned up ${fmt(removed)} cluster bench keys)\n`);
    oursClient.disconnect();
    theirsClient.disconnect();
  }
}

/** Ours on a memory store against rate-limiter-flexible's memory union, decisions one after the other. */
function memoryRow(): Promise<Row> {
  return abRounds(
    'memory: decisions/s',
    () => {
      const limiter = createLimiter({ store: createMemoryStore(), ban: BAN });
      return runSequential((k) => limiter.consume(k, WINDOWS), MEMORY_OPS);
    },
    () => {
      const union = new RateLimiterUnion(
        new RateLimiterMemory({ keyPrefix: 'm', points: PER_MINUTE, duration: 60 }),
        new RateLimiterMemory({ keyPrefix: 'd', points: PER_DAY, duration: 86_400 }),
      );
      return runSequential((k) => union.consume(k), MEMORY_OPS);
    },
    ROUNDS,
  );
}

/** Both on one Redis: many identities, then one busy identity (a client hammering the API: the same keys each time). */
async function redisRows(prefix: string): Promise<Row[]> {
  const oursClient = new Redis(REDIS_URL, { lazyConnect: true });
  const theirsClient = new Redis(REDIS_URL, { lazyConnect: true });
  await Promise.all([oursClient.connect(), theirsClient.connect()]);
  try {
    const { limiter, union } = contenders(oursClient, theirsClient, prefix);
    const hot = () => 'bench-hot';
    return [
      await abRounds(
        `redis: decisions/s (${IN_FLIGHT} in flight)`,
        () => runConcurrent((k) => limiter.consume(k, WINDOWS), REDIS_OPS, IN_FLIGHT),
        () => runConcurrent((k) => union.consume(k), REDIS_OPS, IN_FLIGHT),
        ROUNDS,
      ),
      await abRounds(
        `redis: one identity (${IN_FLIGHT} in flight)`,
        () => runConcurrent((k) => limiter.consume(k, WINDOWS), REDIS_OPS, IN_FLIGHT, hot),
        () => runConcurrent((k) => union.consume(k), REDIS_OPS, IN_FLIGHT, hot),
        ROUNDS,
      ),
    ];
  } finally {
    const removed =
      (await deleteMatching(oursClient, `{${prefix}*`)) + (await deleteMatching(oursClient, `${prefix}*`));
    console.log(`(cleaned up ${fmt(removed)} bench keys)\n`);
    oursClient.disconnect();
    theirsClient.disconnect();
  }
}

async function main(): Promise<void> {
  const url = new URL(REDIS_URL);
  if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost') {
    throw new Error(`bench runs against 127.0.0.1 only (REDIS_URL=${REDIS_URL})`);
  }
  const prefix = `rlbench:${randomBytes(4).toString('hex')}:`;
  console.log(
    `rate-limit bench: ${ROUNDS.rounds} alternating A/B rounds; ${IDENTITIES} identities; windows minute+day (allowed path)`,
  );
  console.log(`memory: ${fmt(MEMORY_OPS)} sequential decisions per round`);
  console.log(
    `redis : ${fmt(REDIS_OPS)} decisions per round, ${IN_FLIGHT} in flight, ${REDIS_URL}, prefix ${prefix}\n`,
  );
  const rows = [await memoryRow(), ...(await redisRows(prefix))];
  if (REDIS_CLUSTER_NODES) rows.push(await clusterRow(REDIS_CLUSTER_NODES, prefix));
  printTable(rows);
  console.log(
    '\nNotes: rlflx RateLimiterUnion issues one Redis script call per window (2 EVALSHA per decision, sent concurrently)\n' +
      'and charges every window even when another refuses; ours is one EVALSHA per decision (both windows + ban state).',
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
