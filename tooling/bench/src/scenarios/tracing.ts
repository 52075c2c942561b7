/**
 * The cost of tracing (issue #22) on the mixed scenario's workloads: four servers of this build per provider, each
 * workload's four measured side by side (rounds.ts together(): loaded at once, CPU per answer over one window), each
 * at the same open-loop rate (BENCH_TRACING_RATE, below what they can serve together, so that each serves the same
 * traffic and the cost is the CPU it takes; saturated closed loops share the CPU by how each batches its work): the
 * baseline (no OTEL variable, so the SDK is not loaded), tracing off (an endpoint and OTEL_SDK_DISABLED=true), and
 * tracing on at 10 % and at 100 % sampling, its spans exported over OTLP/HTTP (protobuf, the default) to a receiver
 * on 127.0.0.1, so export is paid for. Side by side, because this machine's speed drifts by more than the targets from
 * one measurement to the next. Every round starts fresh servers (on the same databases), since one process can sit
 * above another of the same build all its life, and runs the workloads in the order opposite to the round before.
 * The servers run on CPU 0, this process and the load generators it forks on the others (a machine of 2 CPUs or
 * more). A module hook logs what each server resolves: the run stops unless the baseline and `off` load no part of
 * the SDK and the traced servers do. Cost = server CPU per answer against the baseline's in the same window
 * (tracing-cost.ts: mean over rounds with its confidence interval). BENCH_TRACING_VARIANTS runs the baseline beside
 * fewer of the three, for a machine too slow for four within MAX_BUSY. Where a variant sits among the four (the order
 * its server starts in, the database it is given, the order its generator is forked in) turns by one each round, so
 * that what goes with a place rather than with the code falls on every variant alike instead of on one.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startOtlpReceiver } from '@animal-store/test-services';
import { appServer } from '../bench-servers.js';
import type { BenchDatabase } from '../databases.js';
import { mixedDatabase, type Provider, variedTargets } from '../mixed-workload.js';
import { pin } from '../overload-steps.js';
import { type RoundResult, type Target, together } from '../rounds.js';
import type { RunContext, Scenario } from '../scenario.js';
import type { RunningServer } from '../servers.js';
import { settings } from '../settings.js';
import {
  bound,
  busyShare,
  type Cost,
  costOf,
  print,
  rowOf,
  spreadOf,
  threadsOf,
  type TracingReport,
  type Variant,
  MAX_BUSY,
  variantsOf,
} from '../tracing-cost.js';

const PROVIDERS = ['sqlite', 'postgres'] as const;

/** The variants this run measures side by side, the baseline first (BENCH_TRACING_VARIANTS). */
const variants = variantsOf(settings.tracingVariants);

/** What a server resolves that belongs to the SDK (the tracing-off test's list). */
const SDK =
  /@opentelemetry\/(sdk-trace|exporter-trace|otlp-exporter-base|otlp-transformer|resources|context-async-hooks|core)|@prisma\/instrumentation|telemetry\/(sdk|otlp-\w+|lean-\w+|random-ids)\.js/;

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

/** A database of each provider for each place (`<place>-<provider>`), seeded as the mixed scenario seeds them. */
async function databasesOf(ctx: RunContext): Promise<Databases> {
  const dbs: Databases = new Map();
  for (const provider of PROVIDERS)
    for (const place of variants.keys()) dbs.set(`${place}-${provider}`, await mixedDatabase(ctx, provider));
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

type Measured = Target & { workload: string; variant: Variant['name'] };

/** The variants in round `round`'s places: the run's variants turned by one place a round. */
function placesOf(round: number): Variant[] {
  const turn = round % variants.length;
  return [...variants.slice(turn), ...variants.slice(0, turn)];
}

/**
 * Fresh servers (each pinned to CPU 0), and their targets: each chosen workload (BENCH_MIXED) under every variant; and
 * for each provider, its servers' settling load: the workload with 10 % creates, which runs both reads and writes.
 * In round `round`'s places (placesOf): the variant in place i starts i-th, on database i, its generator forked i-th.
 */
async function targetsOf(dbs: Databases, dir: string, endpoint: string, servers: RunningServer[], round: number) {
  const targets: Measured[][] = [];
  const settling: Target[][] = [];
  const places = placesOf(round);
  for (const provider of PROVIDERS) {
    const byVariant: Target[][] = [];
    for (const [place, variant] of places.entries()) {
      const { db, keys } = dbs.get(`${place}-${provider}`)!;
      const server = await serverOf(provider, variant, db, dir, endpoint);
      pin(server.pid, 'server');
      servers.push(server);
      byVariant.push(variedTargets(provider, server, keys));
    }
    settling.push(byVariant.map((workloads) => workloads.find((w) => w.name === `${provider}-10`)!));
    byVariant[0]!.forEach((workload, w) => {
      if (settings.mixedOnly && !settings.mixedOnly.includes(workload.name)) return;
      targets.push(
        places.map((variant, v) => ({
          ...byVariant[v]![w]!,
          name: `${variant.name}:${workload.name}`,
          label: `${workload.label}, ${variant.label}`,
          workload: workload.label,
          variant: variant.name,
        })),
      );
    });
  }
  return { targets, settling, places };
}

/** Spans the receiver got from the traced servers of each variant, per answer they counted. */
function spansPerAnswer(answers: Map<string, number>, counts: Record<string, number>) {
  const out: Record<string, number> = {};
  for (const { name } of variants.filter((v) => v.sdk)) {
    const names = PROVIDERS.map((provider) => `tracing-${name}-${provider}`);
    out[name] = names.reduce((n, s) => n + (counts[s] ?? 0), 0) / names.reduce((n, s) => n + (answers.get(s) ?? 0), 0);
  }
  return out;
}

async function measureCost(ctx: RunContext, endpoint: string, counts: () => Record<string, number>) {
  const dbs = await databasesOf(ctx);
  const { tracingSeconds: seconds, tracingRounds, tracingWarmupSeconds: warmupSeconds, connections } = settings;
  const { tracingSettleSeconds: settleSeconds, tracingRate: rate } = settings;
  const loop = { connections, rate };
  const results = new Map<string, RoundResult[]>();
  const answers = new Map<string, number>();
  let workloads: Measured[][] = [];
  for (let round = 0; round < tracingRounds; round++) {
    const servers: RunningServer[] = [];
    const dir = mkdtempSync(join(tmpdir(), 'animal-store-bench-tracing-'));
    try {
      const fresh = await targetsOf(dbs, dir, endpoint, servers, round);
      workloads = fresh.targets;
      console.log(
        `  round ${round + 1} of ${tracingRounds}: fresh servers in places ${fresh.places
          .map((v) => v.label)
          .join(', ')}, settling for ${settleSeconds} s a provider`,
      );
      // Unmeasured: a fresh server still compiles its hot paths (V8's tiers) long after its first seconds of load, the
      // more so on a quarter of a CPU; measured before that settles, every variant's CPU per answer is a start-up's.
      for (const provider of fresh.settling) await together(provider, settleSeconds, loop);
      for (const workload of round % 2 ? [...workloads].reverse() : workloads) {
        await together(workload, warmupSeconds, loop); // unmeasured, all at once as measured
        const measured = await together(workload, seconds, loop, round);
        for (const [name, result] of measured) results.set(name, [...(results.get(name) ?? []), result]);
        // Said at once, so that a run on a machine too slow for its rate can be stopped rather than waited out.
        const busy = busyShare(measured.values());
        if (busy > MAX_BUSY)
          console.log(
            `  (!) ${workload[0]!.workload}: the ${workload.length} used ${(busy * 100).toFixed(0)} % of CPU 0, above ${MAX_BUSY * 100} %: not judged if it stays so`,
          );
      }
      for (const server of servers)
        answers.set(server.name, (answers.get(server.name) ?? 0) + (await answered(server)));
    } finally {
      await Promise.all(servers.map((s) => s.stop())); // each exports the spans it still holds as it exits
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const byWorkload = workloads.map((w) => new Map(w.map((t) => [t.variant, results.get(t.name)!])));
  const rows = workloads.map((w, i) => rowOf(w[0]!.workload, byWorkload[i]!));
  return { rows, byWorkload, spansPerAnswer: spansPerAnswer(answers, counts()), threads: threadsOf(byWorkload) };
}

export const tracing: Scenario = {
  name: 'tracing',
  description: 'tracing off, 10 % and 100 % sampled vs no SDK loaded, per server CPU-second on the mixed workloads',
  alone: true,
  async run(ctx) {
    const runs = `${settings.tracingRounds} rounds of ${settings.tracingSeconds} s after ${settings.tracingWarmupSeconds} s of warm-up, fresh servers settled for ${settings.tracingSettleSeconds} s`;
    const loop =
      settings.tracingRate === undefined ? 'closed loops' : `open loops at ${settings.tracingRate} req/s each`;
    const labels = variants.map((v) => v.label).join(', ');
    console.log(`\ntracing cost (${loop}, ${runs}): ${labels} side by side on each workload`);
    const loadBefore = loadavg();
    const receiver = await startOtlpReceiver({ keep: false });
    pin(process.pid, 'load'); // the load generators it forks (and the receiver) on the CPUs the servers are not on
    try {
      const { rows, byWorkload, spansPerAnswer, threads } = await measureCost(ctx, receiver.url, () =>
        receiver.counts(),
      );
      const costs = variants.slice(1).map((v) => costOf(v, byWorkload));
      const report: TracingReport = {
        baseline: 'this build with no OTEL variable (no SDK module resolved, checked)',
        variants: variants.map((v) => v.name),
        loop,
        node: process.versions.node,
        load: [...loadBefore, ...loadavg()].map((l) => +l.toFixed(2)),
        rows,
        costs,
        spansPerAnswer,
        threads,
      };
      const verdict = (c: Cost) => {
        const v = variants.find((x) => x.name === c.variant)!;
        return `#22 tracing ${v.label} costs ${bound(v)} per server CPU-second: ${spreadOf(c)} -> ${c.verdict}`;
      };
      return { json: { tracing: report }, print: (out) => print(out, report), targets: costs.map(verdict) };
    } finally {
      pin(process.pid, 'all');
      await receiver.close();
    }
  },
};
