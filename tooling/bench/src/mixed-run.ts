/**
 * The mixed workloads and the crash check of `pnpm bench` (issue #14): what users produce, measured per server
 * CPU-second against the Express floors of the same run.
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { crashCheck, type CrashResult } from './crash.js';
import type { MixSpec } from './mixed.js';
import { CATALOGUE_SIZE } from './page.js';
import {
  BENCH_DIST,
  moreKeys,
  postgresDatabase,
  sqliteDatabase,
  startServer,
  type BenchDatabase,
  type RunningServer,
} from './setup.js';
import { fmtInt, fmtMs, fmtRatio } from './stats.js';

/** Keys the mixed workloads spread their requests over. */
export const MIXED_KEYS = 40;

export interface MixedTarget {
  name: string;
  label: string;
  server: RunningServer;
  mix?: MixSpec;
  /** The floors answer their one canned page. */
  baseline?: boolean;
}

/** What suite.ts lends: its alternating rounds (median server CPU per answer), its servers and its output. */
export interface MixedContext {
  measure(
    targets: MixedTarget[],
  ): Promise<Map<string, { rps: number; p99: number; cpuUs: number; failures: number; rounds: number[] }>>;
  appServer(name: string, db: BenchDatabase, redis: boolean): Promise<RunningServer>;
  track(db: BenchDatabase): void;
  out(line?: string): void;
  table(header: string[], rows: string[][]): string;
}

/** Targets of the issue, per server CPU-second against the plain app.listen floor. */
const TARGETS = {
  sqlite: { 0: 0.75, 10: 0.7, 100: 0.5 },
  postgres: { 0: 0.6, 10: 0.55, 100: 0.4 },
} as const;
const SHARES = [0, 10, 100] as const;

export interface MixedReport {
  load: number[];
  rows: Array<{
    label: string;
    rps: number;
    p99: number;
    cpuUs: number;
    vsPlain: number;
    vsFast: number;
    target?: number;
    failures: number;
  }>;
  targets: string[];
}

export async function runMixed(ctx: MixedContext): Promise<MixedReport> {
  const loadBefore = loadavg();
  const sqlite = await sqliteDatabase(CATALOGUE_SIZE);
  ctx.track(sqlite);
  const postgres = await postgresDatabase(CATALOGUE_SIZE);
  ctx.track(postgres);
  const sqliteKeys = [sqlite.key, ...(await moreKeys(sqlite.url, MIXED_KEYS - 1))];
  const postgresKeys = [postgres.key, ...(await moreKeys(postgres.url, MIXED_KEYS - 1))];
  const floor = await startServer('mixed-floor', join(BENCH_DIST, 'baselines/floor.js'), {});
  const floorPlain = await startServer('mixed-floor-plain', join(BENCH_DIST, 'baselines/floor.js'), {
    FLOOR_SERVER: 'plain',
  });
  const sqliteServer = await ctx.appServer('mixed-sqlite-memory', sqlite, false);
  const postgresServer = await ctx.appServer('mixed-postgres-redis', postgres, true);

  const all: MixedTarget[] = [
    { name: 'floor', label: 'floor: Express canned page', server: floor, baseline: true },
    { name: 'floor-plain', label: 'floor on plain app.listen', server: floorPlain, baseline: true },
    {
      name: 'sqlite-repeated',
      label: 'SQLite+memory one repeated list URL',
      server: sqliteServer,
      mix: { keys: [sqlite.key], createPercent: 0, maxId: 0, repeat: true },
    },
    ...SHARES.map((share) => ({
      name: `sqlite-${share}`,
      label: `SQLite+memory varied pages, ${share} % creates`,
      server: sqliteServer,
      mix: { keys: sqliteKeys, createPercent: share, maxId: CATALOGUE_SIZE },
    })),
    ...SHARES.map((share) => ({
      name: `postgres-${share}`,
      label: `Postgres+Redis varied pages, ${share} % creates`,
      server: postgresServer,
      mix: { keys: postgresKeys, createPercent: share, maxId: CATALOGUE_SIZE },
    })),
  ];
  // BENCH_MIXED (comma list of target names, e.g. `sqlite-0,postgres-10`) measures only those, with both floors.
  const only = process.env['BENCH_MIXED']?.split(',').map((s) => s.trim());
  const targets = only ? all.filter((t) => t.baseline || only.includes(t.name)) : all;
  const measured = await ctx.measure(targets);
  const loadAfter = loadavg();
  const floorCpu = measured.get('floor')!.cpuUs;
  const plainCpu = measured.get('floor-plain')!.cpuUs;
  const report: MixedReport = {
    load: [...loadBefore.map((l) => +l.toFixed(2)), ...loadAfter.map((l) => +l.toFixed(2))],
    rows: [],
    targets: [],
  };
  for (const t of targets) {
    const m = measured.get(t.name)!;
    const [provider, share] = t.name.split('-') as [string, string];
    const target =
      provider === 'sqlite' || provider === 'postgres'
        ? (TARGETS[provider] as Record<string, number>)[share]
        : undefined;
    report.rows.push({
      label: t.label,
      rps: m.rps,
      p99: m.p99,
      cpuUs: m.cpuUs,
      vsPlain: plainCpu / m.cpuUs,
      vsFast: floorCpu / m.cpuUs,
      failures: m.failures,
      ...(target ? { target } : {}),
    });
    if (target !== undefined) {
      const ratio = plainCpu / m.cpuUs;
      report.targets.push(
        `${t.label} >= ${target.toFixed(2)} of the plain floor per server CPU-second: ${fmtRatio(ratio)} -> ${ratio >= target ? 'met' : 'NOT met'}`,
      );
    }
  }
  ctx.out(
    `\nMixed workloads (${MIXED_KEYS} keys; pages with a random status or none, limit 10-100, a random cursor half the time; creates with an Idempotency-Key each), per server CPU-second:`,
  );
  ctx.out(
    `load average (1, 5, 15 min) before: ${report.load.slice(0, 3).join(', ')}; after: ${report.load.slice(3).join(', ')}\n`,
  );
  ctx.out(
    ctx.table(
      ['scenario', 'req/s', 'p99', 'server CPU/req', 'vs plain floor', 'vs floor', 'target (plain)'],
      report.rows.map((r) => [
        r.label,
        fmtInt(r.rps),
        fmtMs(r.p99),
        `${r.cpuUs.toFixed(0)} µs`,
        fmtRatio(r.vsPlain),
        fmtRatio(r.vsFast),
        (r.target !== undefined ? `>= ${r.target.toFixed(2)}` : '') + (r.failures ? ` (!${r.failures} failed)` : ''),
      ]),
    ),
  );
  await floor.stop();
  await floorPlain.stop();
  await sqliteServer.stop();
  await postgresServer.stop();
  return report;
}

/** kill -9 during creates on each provider, restart, check every 201. */
export async function runCrash(ctx: MixedContext): Promise<Array<{ provider: string; result: CrashResult }>> {
  const results: Array<{ provider: string; result: CrashResult }> = [];
  for (const provider of ['sqlite', 'postgres'] as const) {
    const db = provider === 'sqlite' ? await sqliteDatabase(CATALOGUE_SIZE) : await postgresDatabase(CATALOGUE_SIZE);
    ctx.track(db);
    const start = () => ctx.appServer(`crash-${provider}`, db, provider === 'postgres');
    const result = await crashCheck(db, await start(), start, { concurrency: 32, killAfterMs: 3000 });
    results.push({ provider, result });
  }
  ctx.out('\nCrash check (creates on 32 connections, SIGKILL after 3 s, restart on the same database):\n');
  ctx.out(
    ctx.table(
      [
        'database',
        '201 answers',
        'missing or different after restart',
        'replays checked',
        'replays different',
        'requests cut',
      ],
      results.map(({ provider, result: r }) => [
        provider,
        fmtInt(r.answered),
        String(r.missing),
        String(r.replayed),
        String(r.replayMismatches),
        String(r.cut),
      ]),
    ),
  );
  return results;
}
