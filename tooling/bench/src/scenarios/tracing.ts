/**
 * The cost of tracing (issue #22) on the mixed scenario's workloads: four servers of this build per provider, each
 * workload's four measured one after the other: the baseline (no OTEL variable, so the SDK is not loaded), tracing off
 * (an endpoint and OTEL_SDK_DISABLED=true), and tracing on at 10 % and at 100 % sampling, its spans exported over
 * OTLP/HTTP (protobuf, the default) to a receiver on 127.0.0.1, so export is paid for. Every round starts fresh servers
 * (on the same databases), since one process can sit 10-20 % above another of the same build all its life, and runs in
 * the order opposite to the round before. A module hook logs what each server resolves: the run stops unless the
 * baseline and `off` load no part of the SDK and the traced servers do. Cost = server CPU per answer against the
 * baseline's in the same round; the median over rounds per workload, the geometric mean over workloads, is held to the
 * targets.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startOtlpReceiver } from '@animal-store/test-services';
import { appServer } from '../bench-servers.js';
import type { BenchDatabase } from '../databases.js';
import { mixedDatabase, type Provider, variedTargets } from '../mixed-workload.js';
import { type RoundResult, rounds, type Target } from '../rounds.js';
import type { Out, RunContext, Scenario } from '../scenario.js';
import type { RunningServer } from '../servers.js';
import { settings } from '../settings.js';
import { fmtInt, median } from '../stats.js';
import { check, table } from '../table.js';

interface Variant {
  name: 'baseline' | 'off' | '10' | '100';
  label: string;
  /** Most cost allowed against the baseline (a share); `off` must stay below it, the others at or below. */
  target?: number;
  /** Whether the SDK is loaded. */
  sdk: boolean;
  /** Its OTEL variables besides the endpoint and the service name (every variant but the baseline has those). */
  env: Record<string, string>;
}

const VARIANTS: readonly Variant[] = [
  { name: 'baseline', label: 'no SDK', sdk: false, env: {} },
  { name: 'off', label: 'off', target: 0.02, sdk: false, env: { OTEL_SDK_DISABLED: 'true' } },
  {
    name: '10',
    label: '10 %',
    target: 0.05,
    sdk: true,
    env: { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' },
  },
  { name: '100', label: '100 %', target: 0.25, sdk: true, env: { OTEL_TRACES_SAMPLER: 'parentbased_always_on' } },
];

const PROVIDERS = ['sqlite', 'postgres'] as const;

/** What a server resolves that belongs to the SDK (the tracing-off test's list). */
const SDK =
  /@opentelemetry\/(sdk-trace|exporter-trace|resources|context-async-hooks|core)|@prisma\/instrumentation|telemetry\/sdk\.js/;

/** Module hooks logging every specifier a server resolves to `<dir>/<pid>.log`; the `--import` that registers them. */
function resolveLog(dir: string): string {
  const log = `appendFileSync(${JSON.stringify(dir)} + '/' + process.pid + '.log', specifier + '\\n');`;
  const hooks = `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {\n  ${log}\n  return next(specifier, context);\n}\n`;
  writeFileSync(join(dir, 'hooks.mjs'), hooks);
  const url = JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href);
  writeFileSync(join(dir, 'register.mjs'), `import { register } from 'node:module';\nregister(${url});\n`);
  return `--import=${pathToFileURL(join(dir, 'register.mjs')).href}`;
}

type Databases = Map<string, { db: BenchDatabase; keys: string[] }>;

/** A database of each provider for each variant, seeded as the mixed scenario seeds them. */
async function databasesOf(ctx: RunContext): Promise<Databases> {
  const dbs: Databases = new Map();
  for (const provider of PROVIDERS)
    for (const variant of VARIANTS) dbs.set(`${variant.name}-${provider}`, await mixedDatabase(ctx, provider));
  return dbs;
}

/** A server of the variant on its database, checked to load the SDK exactly when the variant should. */
async function serverOf(provider: Provider, variant: Variant, db: BenchDatabase, dir: string, endpoint: string) {
  const name = `tracing-${variant.name}-${provider}`;
  const otel: Record<string, string> =
    variant.name === 'baseline' ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SERVICE_NAME: name };
  const env = { ...otel, ...variant.env };
  const server = await appServer(name, db, { redis: provider === 'postgres', env, nodeArgs: [resolveLog(dir)] });
  const resolved = readFileSync(join(dir, `${server.pid}.log`), 'utf8').split('\n');
  const loaded = resolved.filter((specifier) => SDK.test(specifier));
  if (variant.sdk !== loaded.length > 0)
    throw new Error(`tracing: ${name} ${variant.sdk ? 'did not load' : 'loaded'} the SDK (${loaded.join(', ')})`);
  return server;
}

/** Answers a server counted itself (every request its duration histogram saw, warm-ups included). */
async function answered(server: RunningServer): Promise<number> {
  const text = await (await fetch(`${server.origin}/metrics`)).text();
  const counts = text.matchAll(/^http_server_request_duration_seconds_count\S* (\S+)$/gm);
  return [...counts].reduce((sum, [, value]) => sum + Number(value), 0);
}

interface Row {
  workload: string;
  /** Median server CPU per answer (µs) and req/s by variant. */
  cpuUs: Record<string, number>;
  rps: Record<string, number>;
  /** Median over rounds of the variant's CPU per answer over the baseline's in the same round. */
  ratio: Record<string, number>;
}

function rowOf(workload: string, byVariant: Map<string, RoundResult[]>): Row {
  const base = byVariant.get('baseline')!;
  const row: Row = { workload, cpuUs: {}, rps: {}, ratio: {} };
  for (const [variant, results] of byVariant) {
    row.cpuUs[variant] = median(results.map((r) => r.serverCpuUsPerRequest));
    row.rps[variant] = median(results.map((r) => r.rps));
    row.ratio[variant] = median(results.map((r, i) => r.serverCpuUsPerRequest / base[i]!.serverCpuUsPerRequest));
  }
  return row;
}

const geomean = (values: number[]) => Math.exp(values.reduce((s, v) => s + Math.log(v), 0) / values.length);
/** A variant's cost: the geometric mean over workloads of its median ratio to the baseline, less one. */
function costOf(v: Variant, rows: Row[]) {
  const cost = geomean(rows.map((row) => row.ratio[v.name]!)) - 1;
  return { variant: v.name, cost, target: v.target!, met: v.name === 'off' ? cost < v.target! : cost <= v.target! };
}

const bound = (v: Variant) => `${v.name === 'off' ? '<' : '<='} ${(v.target! * 100).toFixed(0)} %`;
const pct = (ratio: number) => `${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(1)} %`;

interface TracingReport {
  baseline: string;
  load: number[];
  rows: Row[];
  costs: { variant: string; cost: number; target: number; met: boolean }[];
  spansPerAnswer: Record<string, number>;
}

function print(out: Out, r: TracingReport): void {
  out(`\nTracing cost per server CPU-second (baseline: ${r.baseline}):`);
  out(`load average (1, 5, 15 min) before: ${r.load.slice(0, 3).join(', ')}; after: ${r.load.slice(3).join(', ')}\n`);
  const others = VARIANTS.slice(1);
  out(
    table(
      ['workload', 'no SDK CPU/req', ...others.map((v) => `${v.label} CPU/req (cost)`), 'req/s no SDK -> 100 %'],
      r.rows.map((row) => [
        row.workload,
        `${row.cpuUs['baseline']!.toFixed(0)} µs`,
        ...others.map((v) => `${row.cpuUs[v.name]!.toFixed(0)} µs (${pct(row.ratio[v.name]!)})`),
        `${fmtInt(row.rps['baseline']!)} -> ${fmtInt(row.rps['100']!)}`,
      ]),
    ),
  );
  out('');
  out(
    table(
      ['tracing', 'cost (geometric mean)', 'target', 'spans per answer'],
      r.costs.map((c) => {
        const v = VARIANTS.find((x) => x.name === c.variant)!;
        const spans = r.spansPerAnswer[c.variant];
        return [v.label, pct(1 + c.cost), `${bound(v)} ${check(c.met)}`, spans === undefined ? '' : spans.toFixed(2)];
      }),
    ),
  );
}

type Measured = Target & { workload: string; variant: Variant['name'] };

/** Fresh servers, and their targets: each chosen workload (BENCH_MIXED) under the four variants, one after the other. */
async function targetsOf(dbs: Databases, dir: string, endpoint: string, servers: RunningServer[]) {
  const targets: Measured[] = [];
  for (const provider of PROVIDERS) {
    const byVariant: Target[][] = [];
    for (const variant of VARIANTS) {
      const { db, keys } = dbs.get(`${variant.name}-${provider}`)!;
      const server = await serverOf(provider, variant, db, dir, endpoint);
      servers.push(server);
      byVariant.push(variedTargets(provider, server, keys));
    }
    byVariant[0]!.forEach((workload, w) => {
      if (settings.mixedOnly && !settings.mixedOnly.includes(workload.name)) return;
      VARIANTS.forEach((variant, v) =>
        targets.push({
          ...byVariant[v]![w]!,
          name: `${variant.name}:${workload.name}`,
          label: `${workload.label}, ${variant.label}`,
          workload: workload.label,
          variant: variant.name,
        }),
      );
    });
  }
  return targets;
}

/** Spans the receiver got from the traced servers of each variant, per answer they counted. */
function spansPerAnswer(answers: Map<string, number>, counts: Record<string, number>) {
  const out: Record<string, number> = {};
  for (const { name } of VARIANTS.filter((v) => v.sdk)) {
    const names = PROVIDERS.map((provider) => `tracing-${name}-${provider}`);
    out[name] = names.reduce((n, s) => n + (counts[s] ?? 0), 0) / names.reduce((n, s) => n + (answers.get(s) ?? 0), 0);
  }
  return out;
}

async function measureCost(ctx: RunContext, endpoint: string, counts: () => Record<string, number>) {
  const dbs = await databasesOf(ctx);
  const { tracingSeconds: seconds, tracingRounds, connections } = settings;
  const results = new Map<string, RoundResult[]>();
  const answers = new Map<string, number>();
  let targets: Measured[] = [];
  for (let round = 0; round < tracingRounds; round++) {
    const servers: RunningServer[] = [];
    const dir = mkdtempSync(join(tmpdir(), 'animal-store-bench-tracing-'));
    try {
      targets = await targetsOf(dbs, dir, endpoint, servers);
      console.log(`  round ${round + 1} of ${tracingRounds}: fresh servers`);
      const measured = await rounds(round % 2 ? [...targets].reverse() : targets, { seconds, rounds: 1, connections });
      for (const [name, [result]] of measured) results.set(name, [...(results.get(name) ?? []), result!]);
      for (const server of servers)
        answers.set(server.name, (answers.get(server.name) ?? 0) + (await answered(server)));
    } finally {
      await Promise.all(servers.map((s) => s.stop())); // each exports the spans it still holds as it exits
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const rows = [...new Set(targets.map((t) => t.workload))].map((workload) => {
    const of = targets.filter((t) => t.workload === workload);
    return rowOf(workload, new Map(of.map((t) => [t.variant, results.get(t.name)!])));
  });
  return { rows, spansPerAnswer: spansPerAnswer(answers, counts()) };
}

export const tracing: Scenario = {
  name: 'tracing',
  description: 'tracing off, 10 % and 100 % sampled vs no SDK loaded, per server CPU-second on the mixed workloads',
  alone: true,
  async run(ctx) {
    const runs = `${settings.tracingRounds} rounds of ${settings.tracingSeconds} s`;
    console.log(`\ntracing cost (closed loop, ${runs}): no SDK, off, 10 %, 100 % on each workload in turn`);
    const loadBefore = loadavg();
    const receiver = await startOtlpReceiver({ keep: false });
    try {
      const { rows, spansPerAnswer } = await measureCost(ctx, receiver.url, () => receiver.counts());
      const costs = VARIANTS.slice(1).map((v) => costOf(v, rows));
      const report: TracingReport = {
        baseline: 'this build with no OTEL variable (no SDK module resolved, checked)',
        load: [...loadBefore, ...loadavg()].map((l) => +l.toFixed(2)),
        rows,
        costs,
        spansPerAnswer,
      };
      const verdict = (c: (typeof costs)[number]) => {
        const v = VARIANTS.find((x) => x.name === c.variant)!;
        return `#22 tracing ${v.label} costs ${bound(v)} per server CPU-second: ${pct(1 + c.cost)} -> ${check(c.met)}`;
      };
      return { json: { tracing: report }, print: (out) => print(out, report), targets: costs.map(verdict) };
    } finally {
      await receiver.close();
    }
  },
};
