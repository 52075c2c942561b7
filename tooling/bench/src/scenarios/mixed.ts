/**
 * The mixed workloads (issue #14): varied pages with 0, 10 and 100 % creates over many keys on both databases, and the
 * one repeated list URL, in the same alternating rounds as both floors, with no other server up. Judged per server
 * CPU-second against the plain app.listen floor; the load average before and after is printed with the figures.
 */
import { loadavg } from 'node:os';
import { appServer } from '../bench-servers.js';
import {
  floorTargets,
  MIXED_KEYS,
  mixedDatabase,
  mixTarget,
  SHARES,
  variedTargets,
  type Provider,
} from '../mixed-workload.js';
import { measure, type Summary, type Target } from '../rounds.js';
import type { Out, RunContext, Scenario } from '../scenario.js';
import { settings } from '../settings.js';
import { table } from '../table.js';
import { fmtInt, fmtMs, fmtRatio } from '../stats.js';

/** Targets of the issue, per server CPU-second against the plain app.listen floor. */
const TARGETS: Record<Provider, Record<number, number>> = {
  sqlite: { 0: 0.75, 10: 0.7, 100: 0.5 },
  postgres: { 0: 0.6, 10: 0.55, 100: 0.4 },
};

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

async function mixedTargets(ctx: RunContext): Promise<Target[]> {
  const sqlite = await mixedDatabase(ctx, 'sqlite');
  const postgres = await mixedDatabase(ctx, 'postgres');
  const floors = await floorTargets('mixed');
  const sqliteServer = await appServer('mixed-sqlite-memory', sqlite.db);
  const postgresServer = await appServer('mixed-postgres-redis', postgres.db, { redis: true });
  const repeated = { keys: [sqlite.db.key], createPercent: 0, maxId: 0, repeat: true };
  return [
    ...floors,
    mixTarget('sqlite-repeated', 'sqlite', 'one repeated list URL', sqliteServer, repeated),
    ...variedTargets('sqlite', sqliteServer, sqlite.keys),
    ...variedTargets('postgres', postgresServer, postgres.keys),
  ];
}

/** The target of a `<provider>-<share>` row, if the issue set one. */
function targetOf(name: string): number | undefined {
  const [provider, share] = name.split('-') as [string, string];
  return provider === 'sqlite' || provider === 'postgres' ? TARGETS[provider][Number(share)] : undefined;
}

function report(targets: Target[], measured: Map<string, Summary>, load: number[]): MixedReport {
  const floorCpu = measured.get('floor')!.cpuUs;
  const plainCpu = measured.get('floor-plain')!.cpuUs;
  const out: MixedReport = { load, rows: [], targets: [] };
  for (const t of targets) {
    const m = measured.get(t.name)!;
    const target = targetOf(t.name);
    const vsPlain = plainCpu / m.cpuUs;
    out.rows.push({
      label: t.label,
      rps: m.rps,
      p99: m.p99,
      cpuUs: m.cpuUs,
      vsPlain,
      vsFast: floorCpu / m.cpuUs,
      failures: m.failures,
      ...(target ? { target } : {}),
    });
    if (target !== undefined)
      out.targets.push(
        `${t.label} >= ${target.toFixed(2)} of the plain floor per server CPU-second: ${fmtRatio(vsPlain)} -> ${vsPlain >= target ? 'met' : 'NOT met'}`,
      );
  }
  return out;
}

function print(out: Out, r: MixedReport): void {
  out(
    `\nMixed workloads (${MIXED_KEYS} keys; pages with a random status or none, limit 10-100, a random cursor half the time; creates with an Idempotency-Key each), per server CPU-second:`,
  );
  out(`load average (1, 5, 15 min) before: ${r.load.slice(0, 3).join(', ')}; after: ${r.load.slice(3).join(', ')}\n`);
  out(
    table(
      ['scenario', 'req/s', 'p99', 'server CPU/req', 'vs plain floor', 'vs floor', 'target (plain)'],
      r.rows.map((row) => [
        row.label,
        fmtInt(row.rps),
        fmtMs(row.p99),
        `${row.cpuUs.toFixed(0)} µs`,
        fmtRatio(row.vsPlain),
        fmtRatio(row.vsFast),
        (row.target !== undefined ? `>= ${row.target.toFixed(2)}` : '') +
          (row.failures ? ` (!${row.failures} failed)` : ''),
      ]),
    ),
  );
}

export const mixed: Scenario = {
  name: 'mixed',
  description: `varied pages with ${SHARES.join(' / ')} % creates over ${MIXED_KEYS} keys, per server CPU-second vs the floors`,
  alone: true,
  async run(ctx) {
    console.log('\nmixed workloads (closed loop):');
    const loadBefore = loadavg();
    const all = await mixedTargets(ctx);
    // BENCH_MIXED (target names, e.g. `sqlite-0,postgres-10`) measures only those, with both floors.
    const only = settings.mixedOnly;
    const targets = only ? all.filter((t) => t.kind === 'baseline' || only.includes(t.name)) : all;
    const measured = await measure(targets);
    const load = [...loadBefore, ...loadavg()].map((l) => +l.toFixed(2));
    for (const t of all) await t.server.stop();
    const result = report(targets, measured, load);
    return { json: { mixed: result }, print: (out) => print(out, result), targets: result.targets };
  },
};
