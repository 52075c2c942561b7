/**
 * The HTTP benchmark suite of the BUILT server (apps/server/dist), against two baselines measured in the same run:
 * the workspace's Express answering the same bytes (the framework floor) and bare node:http (the ceiling).
 *
 *   pnpm bench                                   (root: builds, then runs this)
 *   node tooling/bench/dist/suite.js             (after a build)
 *   node tooling/bench/dist/suite.js --profile sqlite list     (CPU profile of the server under load, top functions)
 *
 * Environment (all optional): BENCH_SECONDS (5) per run, BENCH_ROUNDS (3) alternating rounds, BENCH_CONNECTIONS (50),
 * BENCH_ONLY (comma list of: throughput, growth, latency, memory, ratelimit), BENCH_LOG_LEVEL (warn) for the servers,
 * BENCH_PG_URL (postgresql://postgres@127.0.0.1:5432/postgres), BENCH_REDIS_URL (redis://127.0.0.1:6379).
 * Targets 127.0.0.1 only; every run is bounded in time; every process and database it makes is removed at the end.
 */
import { execFile, fork } from 'node:child_process';
import { usePgBouncer, useRedisCluster, type PgBouncer, type RedisCluster } from '@animal-store/test-services';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { barChart, type Bar } from './chart.js';
import { printTop } from './cpuprofile-top.js';
import type { LoadRequest, LoadResult, LoadSpec } from './load.js';
import type { MixSpec } from './mixed.js';
import { runCrash, runMixed, type MixedContext, type MixedReport } from './mixed-run.js';
import { CATALOGUE_SIZE, cannedPage } from './page.js';
import {
  BENCH_DIST,
  postgresDatabase,
  REDIS_URL,
  REPO_ROOT,
  rssBytes,
  SERVER_DIST,
  sqliteDatabase,
  startServer,
  stopAll,
  type BenchDatabase,
  type RunningServer,
} from './setup.js';
import { fmtInt, fmtMs, fmtRatio, median } from './stats.js';

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 50);
const LOG_LEVEL = process.env['BENCH_LOG_LEVEL'] ?? 'warn';
const ONLY = new Set(
  (process.env['BENCH_ONLY'] ?? 'throughput,mixed,crash,growth,latency,memory,ratelimit')
    .split(',')
    .map((s) => s.trim()),
);
const MEMORY_SECONDS = Number(process.env['BENCH_MEMORY_SECONDS'] ?? 60);
const FIXED_RATE = 1000;
const FIXED_SECONDS = 10;
const GROWTH_SMALL = 1_000;
const GROWTH_LARGE = 50_000;
const RESULTS = join(BENCH_DIST, '..', 'results');
const SERVER_MAIN = join(SERVER_DIST, 'main.js');

/** Every database made by this run, dropped at the end (or on SIGINT/SIGTERM). */
const dbs: BenchDatabase[] = [];

function load(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = fork(join(BENCH_DIST, 'load.js'), [JSON.stringify(spec)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let result: LoadResult | undefined;
    const timer = setTimeout(() => child.kill('SIGKILL'), (spec.durationSec + 60) * 1000);
    child.on('message', (m) => {
      result = m as LoadResult;
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (result) resolve(result);
      else reject(new Error(`load generator exited with ${code} and no result`));
    });
  });
}

// ---------------------------------------------------------------------------------------------------------------------
// Targets

interface Target {
  name: string;
  label: string;
  kind: Bar['kind'];
  server: RunningServer;
  requests: LoadRequest[];
  /** Requests drawn at random from this mix instead (mixed.ts). */
  mix?: MixSpec;
}

const auth = (key: string) => ({ authorization: `Bearer ${key}` });
const list = (key: string, query = ''): LoadRequest => ({
  method: 'GET',
  path: `/v1/pets${query}`,
  headers: auth(key),
});
/** 40 different pages of 20 (cursors after pet 20, 40, … 800), sent in turn: reads that share less. */
const distinctPages = (key: string): LoadRequest[] =>
  Array.from({ length: 40 }, (_, i) =>
    list(key, `?limit=20&cursor=${Buffer.from(`p1.${(i + 1) * 20}`, 'utf8').toString('base64url')}`),
  );
const get = (key: string, id = 7): LoadRequest => ({ method: 'GET', path: `/v1/pets/${id}`, headers: auth(key) });
const create = (key: string): LoadRequest => ({
  method: 'POST',
  path: '/v1/pets',
  headers: { ...auth(key), 'content-type': 'application/json' },
  body: JSON.stringify({ name: 'Bench', categoryId: 3, status: 'available' }),
});

async function appServer(
  name: string,
  db: BenchDatabase,
  redis: boolean,
  nodeArgs: string[] = [],
  env: Record<string, string> = {},
): Promise<RunningServer> {
  return startServer(
    name,
    SERVER_MAIN,
    { DATABASE_URL: db.url, LOG_LEVEL: LOG_LEVEL, ...(redis ? { REDIS_URL } : { REDIS_URL: '' }), ...env },
    nodeArgs,
  );
}

/** The SQLite list page cache turned off: every list reads the database (the figure without the cache, and growth). */
const NO_PAGE_CACHE = { PAGE_CACHE_ENTRIES: '0' };
/** PostgreSQL read coalescing turned off: one query per request (the figure without it). */
const NO_COALESCING = { READ_COALESCING: 'false' };

/** CPU time (user + system, ms) a process has used so far, from /proc/<pid>/stat. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}
const CLOCK_TICKS = 100;

/** Runs every target once per round, alternating the order each round; returns results by target name. */
type RoundResult = LoadResult & { serverCpuUsPerRequest: number };

async function rounds(
  targets: Target[],
  opts: { seconds: number; connections: number; rounds: number },
): Promise<Map<string, RoundResult[]>> {
  const out = new Map<string, RoundResult[]>(targets.map((t) => [t.name, []]));
  for (const t of targets) {
    await load({
      mode: 'closed',
      origin: t.server.origin,
      requests: t.requests,
      ...(t.mix ? { mix: t.mix } : {}),
      connections: opts.connections,
      durationSec: 2,
    }); // warm-up
  }
  for (let r = 0; r < opts.rounds; r++) {
    const order = r % 2 === 0 ? targets : [...targets].reverse();
    for (const t of order) {
      const cpuBefore = cpuMs(t.server.pid);
      const loaded = await load({
        mode: 'closed',
        origin: t.server.origin,
        requests: t.requests,
        ...(t.mix ? { mix: t.mix } : {}),
        connections: opts.connections,
        durationSec: opts.seconds,
      });
      const res = {
        ...loaded,
        serverCpuUsPerRequest: ((cpuMs(t.server.pid) - cpuBefore) * 1000) / Math.max(1, loaded.ok + loaded.non2xx),
      };
      out.get(t.name)!.push(res);
      const bad =
        res.non2xx + res.errors > 0
          ? `  (!) non-2xx ${res.non2xx}, errors ${res.errors} ${JSON.stringify(res.statusCodes)}`
          : '';
      console.log(
        `  round ${r + 1}  ${t.label.padEnd(38)} ${fmtInt(res.rps).padStart(7)} req/s   p50 ${fmtMs(res.p50)}  p99 ${fmtMs(res.p99)}  server CPU ${res.serverCpuUsPerRequest.toFixed(0)} µs/req${bad}`,
      );
    }
  }
  return out;
}

interface Summary {
  name: string;
  label: string;
  kind: Bar['kind'];
  rps: number;
  p50: number;
  p99: number;
  rounds: number[];
  failures: number;
  /** Median CPU time (user + system) of the server process per answered request, µs. */
  cpuUs: number;
}

function summarise(t: { name: string; label: string; kind: Bar['kind'] }, results: RoundResult[]): Summary {
  return {
    name: t.name,
    label: t.label,
    kind: t.kind,
    rps: median(results.map((r) => r.rps)),
    p50: median(results.map((r) => r.p50)),
    p99: median(results.map((r) => r.p99)),
    rounds: results.map((r) => Math.round(r.rps)),
    failures: results.reduce((n, r) => n + r.non2xx + r.errors, 0),
    cpuUs: median(results.map((r) => r.serverCpuUsPerRequest)),
  };
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  return [
    line(header),
    `|${widths.map((w, i) => (i === 0 ? ` ${'-'.repeat(w)} ` : ` ${'-'.repeat(w - 1)}: `)).join('|')}|`,
    ...rows.map(line),
  ].join('\n');
}

const check = (ok: boolean) => (ok ? 'met' : 'NOT met');

// ---------------------------------------------------------------------------------------------------------------------

async function checkSameBytes(servers: { server: RunningServer; key?: string }[]): Promise<void> {
  const expected = cannedPage();
  for (const { server, key } of servers) {
    const res = await fetch(`${server.origin}/v1/pets`, key ? { headers: auth(key) } : {});
    const text = await res.text();
    if (res.status !== 200 || text !== expected)
      throw new Error(`${server.name}: GET /v1/pets did not answer the canned page (status ${res.status})`);
  }
}

async function rateLimitBench(): Promise<{
  output: string;
  rows: Array<{ scenario: string; ours: number; theirs: number; ratio: string }>;
}> {
  const script = join(REPO_ROOT, 'tooling/bench/dist/rate-limit.js');
  if (!existsSync(script)) throw new Error(`${script} missing: build tooling/bench first`);
  const { stdout } = await promisify(execFile)(process.execPath, [script], {
    env: { ...process.env, REDIS_URL, REDIS_CLUSTER_NODES: redisCluster.nodes },
    timeout: 240_000,
  });
  const rows = stdout
    .split('\n')
    .filter((l) => /^\| (memory|redis)/.test(l)) // "redis cluster: ..." included
    .map((l) => {
      const cells = l.split('|').map((c) => c.trim());
      const n = (s: string | undefined) => Number((s ?? '').replace(/,/g, ''));
      return { scenario: cells[1] ?? '', ours: n(cells[2]), theirs: n(cells[3]), ratio: cells[4] ?? '' };
    });
  return { output: stdout, rows };
}

async function profile(provider: string, op: string): Promise<void> {
  const dir = join(RESULTS, 'profiles');
  mkdirSync(dir, { recursive: true });
  const baseline = provider === 'floor' || provider === 'ceiling';
  const db = baseline
    ? { url: '', key: '', drop: async () => undefined }
    : provider === 'postgres'
      ? await postgresDatabase(CATALOGUE_SIZE)
      : await sqliteDatabase(CATALOGUE_SIZE);
  dbs.push(db);
  const before = new Set(readdirSync(dir));
  try {
    const prof = ['--cpu-prof', `--cpu-prof-dir=${dir}`];
    const server = baseline
      ? await startServer(provider, join(BENCH_DIST, `baselines/${provider}.js`), {}, prof)
      : await appServer(`profile-${provider}`, db, provider === 'postgres', prof);
    const requests = baseline
      ? [{ method: 'GET' as const, path: '/v1/pets' }]
      : op === 'create'
        ? [create(db.key)]
        : op === 'get'
          ? [get(db.key)]
          : [list(db.key)];
    // `varied` and `mixed`: the mixed workload's pages (mixed.ts), without and with 10 % creates.
    const mix: MixSpec | undefined =
      op === 'varied' || op === 'mixed'
        ? { keys: [db.key], createPercent: op === 'mixed' ? 10 : 0, maxId: CATALOGUE_SIZE }
        : undefined;
    const res = await load({
      mode: 'closed',
      origin: server.origin,
      requests,
      ...(mix ? { mix } : {}),
      connections: CONNECTIONS,
      durationSec: Number(process.env['BENCH_PROFILE_SECONDS'] ?? 10),
    });
    console.log(
      `profile ${provider} ${op}: ${fmtInt(res.rps)} req/s under --cpu-prof, p50 ${fmtMs(res.p50)}, non-2xx ${res.non2xx}`,
    );
    await server.stop();
  } finally {
    await stopAll();
    await db.drop();
  }
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile') && !before.has(f));
  if (!file) throw new Error('no .cpuprofile written');
  printTop(join(dir, file), Number(process.env['BENCH_PROFILE_TOP'] ?? 30));
}

/** PgBouncer (transaction mode, 6432) and a Redis Cluster (7001-7006) for the scale-out rows, released at the end. */
let pgbouncer: PgBouncer;
let redisCluster: RedisCluster;
const releaseScaleOut = () =>
  Promise.allSettled([pgbouncer?.release(), redisCluster?.release()].filter((p) => p !== undefined));

async function main(): Promise<void> {
  if (!existsSync(SERVER_MAIN))
    throw new Error(`${SERVER_MAIN} missing: run \`pnpm build\` (or \`pnpm bench\`, which builds first)`);
  const argv = process.argv.slice(2);
  if (argv[0] === '--profile') {
    await profile(argv[1] ?? 'sqlite', argv[2] ?? 'list');
    return;
  }
  if (argv[0] === '--top') {
    for (const f of argv.slice(1)) printTop(f, 30);
    return;
  }
  mkdirSync(RESULTS, { recursive: true });
  [pgbouncer, redisCluster] = await Promise.all([usePgBouncer(), useRedisCluster()]);
  const startedAt = new Date();
  const machine = {
    nproc: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
  };
  console.log(`animal-store bench  ${startedAt.toISOString()}`);
  console.log(`machine: ${machine.nproc} cpus, ${machine.cpu}, ${machine.memoryGiB} GiB, node ${machine.node}`);
  console.log(
    `closed runs: ${CONNECTIONS} keep-alive connections, ${SECONDS} s per run, ${ROUNDS} alternating rounds, medians; servers LOG_LEVEL=${LOG_LEVEL}\n`,
  );

  const report: Record<string, unknown> = {
    startedAt: startedAt.toISOString(),
    machine,
    settings: { SECONDS, ROUNDS, CONNECTIONS, LOG_LEVEL },
  };
  const lines: string[] = [];
  const out = (s = '') => {
    console.log(s);
    lines.push(s);
  };
  const targets = { ratios: [] as string[] };

  try {
    let throughput: Summary[] = [];
    let sqlite: BenchDatabase | undefined;
    let sqliteServer: RunningServer | undefined;
    if (ONLY.has('throughput') || ONLY.has('latency') || ONLY.has('memory')) {
      process.stdout.write('setup: SQLite and PostgreSQL databases, keys, servers ... ');
      sqlite = await sqliteDatabase(CATALOGUE_SIZE);
      dbs.push(sqlite);
      const postgres = await postgresDatabase(CATALOGUE_SIZE);
      dbs.push(postgres);
      const ceiling = await startServer('ceiling', join(BENCH_DIST, 'baselines/ceiling.js'), {});
      const floor = await startServer('floor', join(BENCH_DIST, 'baselines/floor.js'), {});
      const floorPlain = await startServer('floor-plain', join(BENCH_DIST, 'baselines/floor.js'), {
        FLOOR_SERVER: 'plain',
      });
      const handwritten = await startServer('handwritten', join(BENCH_DIST, 'baselines/handwritten.js'), {
        DATABASE_FILE: sqlite.url.slice('file:'.length),
      });
      sqliteServer = await appServer('server-sqlite-memory', sqlite, false);
      const sqliteUncached = await appServer('server-sqlite-memory-no-page-cache', sqlite, false, [], NO_PAGE_CACHE);
      const pgServer = await appServer('server-postgres-redis', postgres, true);
      const pgUncoalesced = await appServer('server-postgres-redis-no-coalescing', postgres, true, [], NO_COALESCING);
      // Past one machine: the same database through PgBouncer in transaction mode, and Redis Cluster instead of Redis.
      const pooled = new URL(postgres.url);
      pooled.host = `127.0.0.1:${pgbouncer.port}`;
      const pgbServer = await appServer('server-pgbouncer-redis', { ...postgres, url: pooled.toString() }, true);
      const clusterServer = await appServer('server-postgres-redis-cluster', postgres, false, [], {
        REDIS_CLUSTER_NODES: redisCluster.nodes,
      });
      await checkSameBytes([
        { server: floor },
        { server: floorPlain },
        { server: handwritten, key: sqlite.key },
        { server: sqliteServer, key: sqlite.key },
        { server: sqliteUncached, key: sqlite.key },
        { server: pgServer, key: postgres.key },
        { server: pgUncoalesced, key: postgres.key },
        { server: pgbServer, key: postgres.key },
        { server: clusterServer, key: postgres.key },
      ]);
      console.log('ok (all answer GET /v1/pets with the same page bytes)\n');

      if (ONLY.has('throughput')) {
        console.log('throughput (closed loop):');
        const all: Target[] = [
          {
            name: 'ceiling',
            label: 'ceiling: node:http canned page',
            kind: 'baseline',
            server: ceiling,
            requests: [{ method: 'GET', path: '/v1/pets' }],
          },
          {
            name: 'floor',
            label: 'floor: Express canned page',
            kind: 'baseline',
            server: floor,
            requests: [{ method: 'GET', path: '/v1/pets' }],
          },
          {
            name: 'floor-plain',
            label: 'floor on plain app.listen',
            kind: 'baseline',
            server: floorPlain,
            requests: [{ method: 'GET', path: '/v1/pets' }],
          },
          {
            name: 'handwritten',
            label: 'reference: hand-written list',
            kind: 'baseline',
            server: handwritten,
            requests: [list(sqlite.key)],
          },
          {
            name: 'sqlite-list',
            label: 'SQLite+memory  list (limit 20)',
            kind: 'sqlite',
            server: sqliteServer,
            requests: [list(sqlite.key)],
          },
          {
            name: 'sqlite-list-uncached',
            label: 'SQLite+memory  list, page cache off',
            kind: 'sqlite',
            server: sqliteUncached,
            requests: [list(sqlite.key)],
          },
          {
            name: 'sqlite-create',
            label: 'SQLite+memory  create',
            kind: 'sqlite',
            server: sqliteServer,
            requests: [create(sqlite.key)],
          },
          {
            name: 'sqlite-get',
            label: 'SQLite+memory  get by id',
            kind: 'sqlite',
            server: sqliteServer,
            requests: [get(sqlite.key)],
          },
          {
            name: 'pg-list',
            label: 'Postgres+Redis list (limit 20)',
            kind: 'postgres',
            server: pgServer,
            requests: [list(postgres.key)],
          },
          {
            name: 'pg-list-uncoalesced',
            label: 'Postgres+Redis list, coalescing off',
            kind: 'postgres',
            server: pgUncoalesced,
            requests: [list(postgres.key)],
          },
          {
            name: 'pg-list-distinct',
            label: 'Postgres+Redis list, 40 pages in turn',
            kind: 'postgres',
            server: pgServer,
            requests: distinctPages(postgres.key),
          },
          {
            name: 'pg-create',
            label: 'Postgres+Redis create',
            kind: 'postgres',
            server: pgServer,
            requests: [create(postgres.key)],
          },
          {
            name: 'pg-get',
            label: 'Postgres+Redis get by id',
            kind: 'postgres',
            server: pgServer,
            requests: [get(postgres.key)],
          },
          {
            name: 'pgb-list',
            label: 'Postgres via PgBouncer list',
            kind: 'postgres',
            server: pgbServer,
            requests: [list(postgres.key)],
          },
          {
            name: 'pgb-list-distinct',
            label: 'Postgres via PgBouncer, 40 pages',
            kind: 'postgres',
            server: pgbServer,
            requests: distinctPages(postgres.key),
          },
          {
            name: 'pgb-create',
            label: 'Postgres via PgBouncer create',
            kind: 'postgres',
            server: pgbServer,
            requests: [create(postgres.key)],
          },
          {
            name: 'cluster-list',
            label: 'Postgres+Redis Cluster list',
            kind: 'postgres',
            server: clusterServer,
            requests: [list(postgres.key)],
          },
        ];
        const res = await rounds(all, { seconds: SECONDS, connections: CONNECTIONS, rounds: ROUNDS });
        throughput = all.map((t) => summarise(t, res.get(t.name)!));
        report['throughput'] = throughput;
      }
      if (ONLY.has('latency')) {
        console.log(
          `\nfixed rate (open loop, ${FIXED_RATE} req/s for ${FIXED_SECONDS} s, latency from the scheduled send time):`,
        );
        const fixed: Array<{ label: string; res: LoadResult }> = [];
        for (const [label, server, req] of [
          ['floor: Express canned page', floor, { method: 'GET', path: '/v1/pets' }],
          ['floor on plain app.listen', floorPlain, { method: 'GET', path: '/v1/pets' }],
          ['SQLite+memory  list (limit 20)', sqliteServer, list(sqlite.key)],
          ['SQLite+memory  list, page cache off', sqliteUncached, list(sqlite.key)],
          ['Postgres+Redis list (limit 20)', pgServer, list(postgres.key)],
          ['Postgres+Redis list, coalescing off', pgUncoalesced, list(postgres.key)],
        ] as const) {
          await load({
            mode: 'open',
            origin: server.origin,
            requests: [req],
            connections: 64,
            durationSec: 2,
            rate: FIXED_RATE,
          }); // warm-up
          const res = await load({
            mode: 'open',
            origin: server.origin,
            requests: [req],
            connections: 64,
            durationSec: FIXED_SECONDS,
            rate: FIXED_RATE,
          });
          console.log(
            `  ${label.padEnd(34)} ${fmtInt(res.rps)} req/s   p50 ${fmtMs(res.p50)}  p90 ${fmtMs(res.p90)}  p99 ${fmtMs(res.p99)}  max ${fmtMs(res.max)}  non-2xx ${res.non2xx}`,
          );
          fixed.push({ label, res });
        }
        report['fixedRate'] = fixed;
      }
      if (ONLY.has('memory')) {
        console.log(
          `\nmemory: RSS of the SQLite server over ${MEMORY_SECONDS} s of closed-loop load (list, list, get, create in turn), sampled every 5 s:`,
        );
        const samples: Array<{ t: number; rssMiB: number }> = [];
        const started = Date.now();
        const sample = () =>
          samples.push({ t: Math.round((Date.now() - started) / 1000), rssMiB: rssBytes(sqliteServer!.pid) / 2 ** 20 });
        sample();
        const timer = setInterval(sample, 5000);
        const res = await load({
          mode: 'closed',
          origin: sqliteServer.origin,
          requests: [list(sqlite.key), list(sqlite.key), get(sqlite.key), create(sqlite.key)],
          connections: CONNECTIONS,
          durationSec: MEMORY_SECONDS,
        });
        clearInterval(timer);
        sample();
        // samples[0] is the idle server just before the load; growth is judged from the first sample under load.
        const rss = samples.slice(1).map((s) => s.rssMiB);
        console.log(`  ${samples.map((s) => `${s.t}s:${s.rssMiB.toFixed(0)}`).join('  ')} MiB`);
        console.log(`  ${fmtInt(res.rps)} req/s, non-2xx ${res.non2xx}`);
        report['memory'] = {
          samples,
          idle: samples[0]!.rssMiB,
          rps: res.rps,
          non2xx: res.non2xx,
          first: rss[0],
          last: rss[rss.length - 1],
          max: Math.max(...rss),
        };
      }
    }

    let growth: { small: Summary; large: Summary } | undefined;
    if (ONLY.has('growth')) {
      console.log(
        `\ncost growth: GET /v1/pets?status=sold&limit=100 (sold pets created last) on ${fmtInt(GROWTH_SMALL)} and ${fmtInt(GROWTH_LARGE)} pets, SQLite+memory, page cache off:`,
      );
      const small = await sqliteDatabase(GROWTH_SMALL);
      dbs.push(small);
      const large = await sqliteDatabase(GROWTH_LARGE);
      dbs.push(large);
      // The page cache off: every request runs the query, so the figure is the query's cost growth, not the cache's.
      const sSmall = await appServer('growth-1k', small, false, [], NO_PAGE_CACHE);
      const sLarge = await appServer('growth-50k', large, false, [], NO_PAGE_CACHE);
      const q = '?status=sold&limit=100';
      const gt: Target[] = [
        {
          name: 'small',
          label: `filtered page, ${fmtInt(GROWTH_SMALL)} pets`,
          kind: 'sqlite',
          server: sSmall,
          requests: [list(small.key, q)],
        },
        {
          name: 'large',
          label: `filtered page, ${fmtInt(GROWTH_LARGE)} pets`,
          kind: 'sqlite',
          server: sLarge,
          requests: [list(large.key, q)],
        },
      ];
      const res = await rounds(gt, { seconds: SECONDS, connections: CONNECTIONS, rounds: ROUNDS });
      growth = { small: summarise(gt[0]!, res.get('small')!), large: summarise(gt[1]!, res.get('large')!) };
      report['growth'] = growth;
      await sSmall.stop();
      await sLarge.stop();
    }

    const mixedContext: MixedContext = {
      async measure(mixedTargets) {
        const asTargets: Target[] = mixedTargets.map((t) => ({
          name: t.name,
          label: t.label,
          kind: t.baseline ? 'baseline' : t.name.startsWith('sqlite') ? 'sqlite' : 'postgres',
          server: t.server,
          requests: [{ method: 'GET', path: '/v1/pets' }],
          ...(t.mix ? { mix: t.mix } : {}),
        }));
        const res = await rounds(asTargets, { seconds: SECONDS, connections: CONNECTIONS, rounds: ROUNDS });
        return new Map(asTargets.map((t) => [t.name, summarise(t, res.get(t.name)!)]));
      },
      appServer: (name, db, redis) => appServer(name, db, redis),
      track: (db) => dbs.push(db),
      out,
      table,
    };
    let mixed: MixedReport | undefined;
    if (ONLY.has('mixed')) {
      await stopAll(); // the mixed workloads run alone, with floors of their own
      console.log('\nmixed workloads (closed loop):');
      mixed = await runMixed(mixedContext);
      report['mixed'] = mixed;
    }
    if (ONLY.has('crash')) {
      await stopAll();
      console.log('\ncrash check: SIGKILL during creates, restart, every 201 still there ...');
      const crash = await runCrash(mixedContext);
      report['crash'] = crash;
      for (const { provider, result } of crash) {
        targets.ratios.push(
          `Crash check on ${provider}: ${result.answered} creates answered 201 before SIGKILL, ${result.missing} missing after restart, ${result.replayMismatches} of ${result.replayed} replays different -> ${check(result.missing === 0 && result.replayMismatches === 0 && result.answered > 0)}`,
        );
      }
    }

    let rl: Awaited<ReturnType<typeof rateLimitBench>> | undefined;
    if (ONLY.has('ratelimit')) {
      await stopAll(); // nothing else runs while the limiter is measured
      console.log(
        '\nlimiter decisions per second vs rate-limiter-flexible (tooling/bench rate-limit.ts, 5 alternating rounds) ...',
      );
      rl = await rateLimitBench();
      report['rateLimit'] = rl.rows;
    }

    // ---- report ------------------------------------------------------------------------------------------------
    out('\n== Results (medians of alternating rounds) ==\n');
    const floor = throughput.find((s) => s.name === 'floor');
    const ceiling = throughput.find((s) => s.name === 'ceiling');
    if (floor && ceiling) {
      out(
        table(
          ['scenario', 'req/s', 'p50', 'p99', 'vs floor', 'vs ceiling', 'server CPU/req', 'rounds (req/s)'],
          throughput.map((s) => [
            s.label,
            fmtInt(s.rps),
            fmtMs(s.p50),
            fmtMs(s.p99),
            fmtRatio(s.rps / floor.rps),
            fmtRatio(s.rps / ceiling.rps),
            `${s.cpuUs.toFixed(0)} µs`,
            s.rounds.map(fmtInt).join(' / ') + (s.failures ? ` (!${s.failures} failed)` : ''),
          ]),
        ),
      );
      const sl = throughput.find((s) => s.name === 'sqlite-list')!;
      const pl = throughput.find((s) => s.name === 'pg-list')!;
      const su = throughput.find((s) => s.name === 'sqlite-list-uncached')!;
      targets.ratios.push(
        `List, SQLite + memory limiter >= 0.60 of the Express floor: ${fmtRatio(sl.rps / floor.rps)} -> ${check(sl.rps / floor.rps >= 0.6)}` +
          ` (page cache off: ${fmtRatio(su.rps / floor.rps)} -> ${check(su.rps / floor.rps >= 0.6)})`,
      );
      const hw = throughput.find((s) => s.name === 'handwritten');
      const fp = throughput.find((s) => s.name === 'floor-plain');
      if (fp) {
        out(
          `\nThe floor runs on the service's server construction (requests created with the app's prototypes); on Express's plain ` +
            `app.listen it reached ${fmtRatio(fp.rps / floor.rps)} of that. Against the plain floor: SQLite list ${fmtRatio(sl.rps / fp.rps)}, ` +
            `Postgres list ${fmtRatio(pl.rps / fp.rps)}${hw ? `, reference ${fmtRatio(hw.rps / fp.rps)}` : ''}.`,
        );
      }
      if (hw) {
        out(
          `\nReference: a hand-written Express + better-sqlite3 list with a key check (no contract, limiter, ids, logs, metrics, ` +
            `on plain app.listen) reached ${fmtRatio(hw.rps / floor.rps)} of the floor in this run; the service's list reached ${fmtRatio(sl.rps / hw.rps)} of it ` +
            `(${fmtRatio(su.rps / hw.rps)} with the page cache off, every request reading the database as the reference does).`,
        );
      }
      const pu = throughput.find((s) => s.name === 'pg-list-uncoalesced')!;
      targets.ratios.push(
        `List, Postgres + Redis limiter >= 0.40 of the Express floor: ${fmtRatio(pl.rps / floor.rps)} -> ${check(pl.rps / floor.rps >= 0.4)}` +
          ` (coalescing off: ${fmtRatio(pu.rps / floor.rps)} -> ${check(pu.rps / floor.rps >= 0.4)})`,
      );
      const svg = barChart(
        'Animal Store: throughput vs the Express floor and the node:http ceiling',
        `${machine.nproc} cpus ${machine.cpu}, node ${machine.node}; ${CONNECTIONS} connections, ${SECONDS} s x ${ROUNDS} alternating rounds, medians; ${startedAt.toISOString()}`,
        throughput.map((s) => ({
          label: s.label,
          value: s.rps,
          kind: s.kind,
          note: `(${fmtRatio(s.rps / floor.rps)} of floor)`,
        })),
      );
      writeFileSync(join(RESULTS, 'throughput.svg'), svg);
    }
    const fixed = report['fixedRate'] as Array<{ label: string; res: LoadResult }> | undefined;
    if (fixed) {
      out(`\nFixed rate ${FIXED_RATE} req/s, ${FIXED_SECONDS} s, open loop (latency from the scheduled send time):\n`);
      out(
        table(
          ['scenario', 'achieved req/s', 'p50', 'p90', 'p99', 'max', 'non-2xx'],
          fixed.map(({ label, res }) => [
            label,
            fmtInt(res.rps),
            fmtMs(res.p50),
            fmtMs(res.p90),
            fmtMs(res.p99),
            fmtMs(res.max),
            String(res.non2xx + res.errors),
          ]),
        ),
      );
      for (const { label, res } of fixed.slice(2))
        targets.ratios.push(
          `p99 at ${FIXED_RATE} req/s below 20 ms (${label.trim()}): ${fmtMs(res.p99)} -> ${check(res.p99 < 20)}`,
        );
    }
    if (growth) {
      out(
        `\nCost growth: GET /v1/pets?status=sold&limit=100, SQLite + memory limiter, page cache off (every request runs the query), ${CONNECTIONS} connections:\n`,
      );
      const { small, large } = growth;
      out(
        table(
          ['catalogue', 'req/s', 'p50', 'p99', 'rounds (req/s)'],
          [small, large].map((s) => [
            s.label,
            fmtInt(s.rps),
            fmtMs(s.p50),
            fmtMs(s.p99),
            s.rounds.map(fmtInt).join(' / '),
          ]),
        ),
      );
      const ratio = large.p50 / small.p50;
      out(
        `p50 ${fmtInt(GROWTH_LARGE)}/${fmtInt(GROWTH_SMALL)}: ${fmtRatio(ratio)}   (req/s ${fmtInt(GROWTH_SMALL)}/${fmtInt(GROWTH_LARGE)}: ${fmtRatio(small.rps / large.rps)})`,
      );
      targets.ratios.push(`Cost growth 1k -> 50k pets <= 1.5x (p50): ${fmtRatio(ratio)} -> ${check(ratio <= 1.5)}`);
    }
    const mem = report['memory'] as
      | {
          samples: Array<{ t: number; rssMiB: number }>;
          idle: number;
          first: number;
          last: number;
          max: number;
          rps: number;
        }
      | undefined;
    if (mem) {
      out(
        `\nMemory: server RSS over ${MEMORY_SECONDS} s of steady load (${fmtInt(mem.rps)} req/s), idle before: ${mem.idle.toFixed(1)} MiB:`,
      );
      out(
        `first under load ${mem.first.toFixed(1)} MiB, last ${mem.last.toFixed(1)} MiB, max ${mem.max.toFixed(1)} MiB, growth ${(mem.last - mem.first).toFixed(1)} MiB (${(((mem.last - mem.first) / mem.first) * 100).toFixed(1)} %)`,
      );
      out(`samples: ${mem.samples.map((s) => `${s.t}s ${s.rssMiB.toFixed(0)}`).join(', ')}`);
    }
    if (rl) {
      out(
        '\nLimiter decisions per second (tooling/bench rate-limit.ts, ours vs rate-limiter-flexible, medians of 5 alternating rounds):\n',
      );
      out(
        table(
          ['scenario', 'ours/s', 'rate-limiter-flexible/s', 'ours/theirs'],
          rl.rows.map((r) => [r.scenario, fmtInt(r.ours), fmtInt(r.theirs), r.ratio]),
        ),
      );
    }
    if (mixed) targets.ratios.push(...mixed.targets);
    if (targets.ratios.length > 0) {
      out('\nTargets:');
      for (const t of targets.ratios) out(`- ${t}`);
    }
    report['targets'] = targets.ratios;
    report['finishedAt'] = new Date().toISOString();
    writeFileSync(join(RESULTS, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(join(RESULTS, 'latest.md'), `${lines.join('\n')}\n`);
    console.log(
      `\nwritten: ${join(RESULTS, 'latest.json')}, latest.md${floor ? ', throughput.svg' : ''}  (${Math.round((Date.now() - startedAt.getTime()) / 1000)} s)`,
    );
  } finally {
    await stopAll();
    for (const db of dbs)
      await db.drop().catch((err: unknown) => console.error(`could not drop a bench database: ${String(err)}`));
    await releaseScaleOut();
  }
}

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    if (stopping) return;
    stopping = true;
    console.error(`\n${signal}: stopping servers, dropping bench databases`);
    void stopAll()
      .then(() => Promise.allSettled(dbs.map((db) => db.drop())))
      .then(releaseScaleOut)
      .finally(() => process.exit(130));
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
