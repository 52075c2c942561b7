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
import { performance } from 'node:perf_hooks';
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
  type WindowLimit,
} from '@animal-store/rate-limit';

const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
/** Seed nodes of a Redis Cluster (pnpm bench starts one on 7001-7006): adds the cluster row when set. */
const REDIS_CLUSTER_NODES = process.env['REDIS_CLUSTER_NODES'];
const ROUNDS = 5;
const IDENTITIES = 10_000;
const MEMORY_OPS = 200_000;
const REDIS_OPS = 20_000;
const IN_FLIGHT = 50;
const DEADLINE = Date.now() + 50_000; // hard bound on total run time
const PER_MINUTE = 1_000_000_000;
const PER_DAY = 1_000_000_000;

const WINDOWS: WindowLimit[] = [
  { name: 'minute', limit: PER_MINUTE, windowMs: MINUTE_MS },
  { name: 'day', limit: PER_DAY, windowMs: DAY_MS },
];

type Consume = (key: string) => Promise<unknown>;

const keys = Array.from({ length: IDENTITIES }, (_, i) => `bench-key-${i}`);
/** Pseudo-random but identical key sequence for both contenders. */
function keyAt(i: number): string {
  return keys[(i * 7919) % IDENTITIES]!;
}

async function runSequential(consume: Consume, ops: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < ops; i++) await consume(keyAt(i));
  return ops / ((performance.now() - start) / 1000);
}

async function runConcurrent(
  consume: Consume,
  ops: number,
  inFlight: number,
  key: (i: number) => string = keyAt,
): Promise<number> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < ops) {
      const i = next++;
      await consume(key(i));
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  return ops / ((performance.now() - start) / 1000);
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

interface Row {
  scenario: string;
  ours: number[];
  theirs: number[];
}

/** Alternating A/B rounds (order flipped each round to cancel drift). */
async function abRounds(scenario: string, ours: () => Promise<number>, theirs: () => Promise<number>): Promise<Row> {
  const row: Row = { scenario, ours: [], theirs: [] };
  await ours(); // warm-up (JIT, script cache, connections)
  await theirs();
  // Past the deadline a scenario still gets one round, so a busy machine shows a figure rather than n/a.
  for (let r = 0; r < ROUNDS && (r === 0 || Date.now() < DEADLINE); r++) {
    if (r % 2 === 0) {
      row.ours.push(await ours());
      row.theirs.push(await theirs());
    } else {
      row.theirs.push(await theirs());
      row.ours.push(await ours());
    }
  }
  return row;
}

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

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

function printTable(rows: Row[]): void {
  const header = ['scenario', 'ours (median/s)', 'rlflx (median/s)', 'ours/theirs', 'rounds'];
  const body = rows.map((r) => {
    const o = median(r.ours);
    const t = median(r.theirs);
    return [r.scenario, fmt(o), fmt(t), `${(o / t).toFixed(2)}x`, String(r.ours.length)];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]): string =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const b of body) console.log(line(b));
  console.log('');
  for (const r of rows) {
    console.log(`${r.scenario}: ours   rounds ${r.ours.map(fmt).join(', ')}`);
    console.log(`${' '.repeat(r.scenario.length)}  rlflx  rounds ${r.theirs.map(fmt).join(', ')}`);
  }
}

/** Ours (one script call per decision) and rate-limiter-flexible's union of two windows, each on its own client. */
function contenders(ours: Redis | Cluster, theirs: Redis | Cluster, prefix: string) {
  const window = (suffix: string, points: number, duration: number) =>
    new RateLimiterRedis({ storeClient: theirs, keyPrefix: `${prefix}rlflx-${suffix}`, points, duration });
  return {
    limiter: createLimiter({ store: createRedisStore({ client: ours, prefix: `${prefix}ours:` }) }),
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

async function main(): Promise<void> {
  const url = new URL(REDIS_URL);
  if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost') {
    throw new Error(`bench runs against 127.0.0.1 only (REDIS_URL=${REDIS_URL})`);
  }
  const prefix = `rlbench:${randomBytes(4).toString('hex')}:`;
  console.log(
    `rate-limit bench: ${ROUNDS} alternating A/B rounds; ${IDENTITIES} identities; windows minute+day (allowed path)`,
  );
  console.log(`memory: ${fmt(MEMORY_OPS)} sequential decisions per round`);
  console.log(
    `redis : ${fmt(REDIS_OPS)} decisions per round, ${IN_FLIGHT} in flight, ${REDIS_URL}, prefix ${prefix}\n`,
  );

  const rows: Row[] = [];

  // ---- memory ---------------------------------------------------------------
  rows.push(
    await abRounds(
      'memory: decisions/s',
      () => {
        const limiter = createLimiter({ store: createMemoryStore() });
        return runSequential((k) => limiter.consume(k, WINDOWS), MEMORY_OPS);
      },
      () => {
        const union = new RateLimiterUnion(
          new RateLimiterMemory({ keyPrefix: 'm', points: PER_MINUTE, duration: 60 }),
          new RateLimiterMemory({ keyPrefix: 'd', points: PER_DAY, duration: 86_400 }),
        );
        return runSequential((k) => union.consume(k), MEMORY_OPS);
      },
    ),
  );

  // ---- redis ----------------------------------------------------------------
  const oursClient = new Redis(REDIS_URL, { lazyConnect: true });
  const theirsClient = new Redis(REDIS_URL, { lazyConnect: true });
  await Promise.all([oursClient.connect(), theirsClient.connect()]);
  try {
    const { limiter, union } = contenders(oursClient, theirsClient, prefix);
    rows.push(
      await abRounds(
        `redis: decisions/s (${IN_FLIGHT} in flight)`,
        () => runConcurrent((k) => limiter.consume(k, WINDOWS), REDIS_OPS, IN_FLIGHT),
        () => runConcurrent((k) => union.consume(k), REDIS_OPS, IN_FLIGHT),
      ),
    );
    // One busy identity (a client hammering the API): every decision touches the same keys.
    const hot = () => 'bench-hot';
    rows.push(
      await abRounds(
        `redis: one identity (${IN_FLIGHT} in flight)`,
        () => runConcurrent((k) => limiter.consume(k, WINDOWS), REDIS_OPS, IN_FLIGHT, hot),
        () => runConcurrent((k) => union.consume(k), REDIS_OPS, IN_FLIGHT, hot),
      ),
    );
  } finally {
    const removed =
      (await deleteMatching(oursClient, `{${prefix}*`)) + (await deleteMatching(oursClient, `${prefix}*`));
    console.log(`(cleaned up ${fmt(removed)} bench keys)\n`);
    oursClient.disconnect();
    theirsClient.disconnect();
  }

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
