/**
 * The tracing scenario's figures (scenarios/tracing.ts): its variants and targets, the cost of each variant per round
 * and per workload against the baseline of the same round, and the printed report. A round's cost is its geometric mean
 * over workloads of CPU per answer against the baseline's; a variant's cost is the mean over rounds (each round's
 * servers are fresh processes, so rounds are independent measurements) with its 90 % confidence interval. A target is
 * met when the interval's upper end is within it, missed when its lower end is past it, and not resolved otherwise:
 * the run's noise (a process's own speed, the collector's work falling in one window or the next) decides, not a
 * median that one lucky round can carry. The `off` variant runs the baseline's code, so an interval of off's that
 * excludes zero is a bias between servers of the same code, which the report flags.
 */
import type { RoundResult } from './rounds.js';
import { byThread, type ThreadCpu } from './servers.js';
import type { Out } from './scenario.js';
import { fmtInt, type Interval, meanInterval, median } from './stats.js';
import { table } from './table.js';

export interface Variant {
  name: 'baseline' | 'off' | '10' | '100';
  label: string;
  /** Most cost allowed against the baseline (a share); `off` must stay below it, the others at or below. */
  target?: number;
  /** Whether the SDK is loaded. */
  sdk: boolean;
  /** Its OTEL variables besides the endpoint and the service name (every variant but the baseline has those). */
  env: Record<string, string>;
}

export const VARIANTS: readonly Variant[] = [
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

/**
 * The variants a run measures (BENCH_TRACING_VARIANTS): the baseline, which every cost is measured against, and the
 * named ones (all when none is named), in VARIANTS' order. Fewer servers side by side use less of CPU 0, so a slower
 * machine can measure one variant within MAX_BUSY where it cannot measure the three.
 */
export function variantsOf(names: readonly string[] | undefined): readonly Variant[] {
  if (!names) return VARIANTS;
  const [baseline, ...others] = VARIANTS;
  if (names.length === 0 || names.some((name) => !others.some((v) => v.name === name)))
    throw new Error(
      `BENCH_TRACING_VARIANTS names ${others.map((v) => v.name).join(', ')} (the baseline always runs), not "${names.join(',')}"`,
    );
  return [baseline!, ...others.filter((v) => names.includes(v.name))];
}

export interface Row {
  workload: string;
  /** Median server CPU per answer (µs) and req/s by variant. */
  cpuUs: Record<string, number>;
  rps: Record<string, number>;
  /** Median over rounds of the variant's CPU per answer over the baseline's in the same round. */
  ratio: Record<string, number>;
  /** Median over rounds of the share of one CPU a workload's servers used together in the window (busyOf). */
  busy: number;
}

/** Results of one workload, by variant, one per round in round order. */
export type WorkloadResults = Map<string, RoundResult[]>;

/**
 * Most of CPU 0 the servers of a workload (one a variant) may use together for its window to be judged. The method holds
 * every server below what they can serve together, so that each serves the same traffic and its cost is the CPU it
 * takes. Past this share the open loops queue (answers tens of milliseconds late), and a server that falls behind
 * shares its batched work (coalesced reads, group commits) among more answers the longer its queue: the slower
 * variants' CPU per answer reads low, and so do their costs.
 */
export const MAX_BUSY = 0.75;

/** The share of one CPU some servers used together in one window: their answers a second times their CPU per answer. */
export const busyShare = (results: Iterable<RoundResult>): number =>
  [...results].reduce((sum, r) => sum + (r.rps * r.serverCpuUsPerRequest) / 1e6, 0);

/** The share of one CPU the servers of a workload used together (busyShare), as the median over rounds. */
export function busyOf(byVariant: WorkloadResults): number {
  const variants = [...byVariant.values()];
  const rounds = Math.min(...variants.map((results) => results.length));
  return median(Array.from({ length: rounds }, (_, r) => busyShare(variants.map((results) => results[r]!))));
}

export function rowOf(workload: string, byVariant: WorkloadResults): Row {
  const base = byVariant.get('baseline')!;
  const row: Row = { workload, cpuUs: {}, rps: {}, ratio: {}, busy: busyOf(byVariant) };
  for (const [variant, results] of byVariant) {
    row.cpuUs[variant] = median(results.map((r) => r.serverCpuUsPerRequest));
    row.rps[variant] = median(results.map((r) => r.rps));
    row.ratio[variant] = median(results.map((r, i) => r.serverCpuUsPerRequest / base[i]!.serverCpuUsPerRequest));
  }
  return row;
}

/**
 * Each variant's CPU per answer by thread (µs): for each thread group, the median over every round of every workload.
 * Where a variant's cost goes: its JavaScript and the collector's pauses (main), the collector's concurrent work (V8's
 * helper threads), the export worker.
 */
export function threadsOf(workloads: WorkloadResults[]): Record<string, ThreadCpu> {
  const out: Record<string, ThreadCpu> = {};
  for (const variant of workloads[0]?.keys() ?? []) {
    const all = workloads.flatMap((w) => w.get(variant)!.map((r) => r.threadCpuUsPerRequest));
    out[variant] = byThread((group) => median(all.map((t) => t[group])));
  }
  return out;
}

const geomean = (values: number[]) => Math.exp(values.reduce((s, v) => s + Math.log(v), 0) / values.length);

export type Verdict = 'met' | 'NOT met' | 'not resolved' | 'not judged';

export interface Cost {
  variant: string;
  /** Each round's cost, in round order. */
  rounds: number[];
  /** Their mean and its 90 % confidence interval. */
  cost: Interval;
  target: number;
  verdict: Verdict;
}

/**
 * A variant's cost in each round (geometric mean over workloads), summarised over the rounds; not judged when a
 * workload's servers used more than MAX_BUSY of their CPU, outside the method.
 */
export function costOf(v: Variant, workloads: WorkloadResults[]): Cost {
  const roundsRun = workloads[0]!.get(v.name)!.length;
  const perRound = Array.from({ length: roundsRun }, (_, r) =>
    geomean(
      workloads.map((w) => w.get(v.name)![r]!.serverCpuUsPerRequest / w.get('baseline')![r]!.serverCpuUsPerRequest),
    ),
  ).map((ratio) => ratio - 1);
  const cost = meanInterval(perRound);
  const saturated = workloads.some((w) => busyOf(w) > MAX_BUSY);
  return {
    variant: v.name,
    rounds: perRound,
    cost,
    target: v.target!,
    verdict: saturated ? 'not judged' : verdictOf(v, cost),
  };
}

/** Met when the whole interval is within the target (below it, for `off`), missed when it is all past it. */
export function verdictOf(v: Variant, cost: Interval): Verdict {
  const within = (share: number) => (v.name === 'off' ? share < v.target! : share <= v.target!);
  if (within(cost.high)) return 'met';
  return within(cost.low) ? 'not resolved' : 'NOT met';
}

export const bound = (v: Variant) => `${v.name === 'off' ? '<' : '<='} ${(v.target! * 100).toFixed(0)} %`;
const pct = (share: number) => `${share >= 0 ? '+' : ''}${(share * 100).toFixed(1)} %`;
export const spreadOf = (c: Cost) =>
  `${pct(c.cost.mean)} (90 % CI ${pct(c.cost.low)} .. ${pct(c.cost.high)}; rounds ${pct(Math.min(...c.rounds))} .. ${pct(Math.max(...c.rounds))})`;

export interface TracingReport {
  baseline: string;
  /** The variants measured (variantsOf), the baseline first. */
  variants: string[];
  /** How each server was loaded: open loops at a rate, or closed loops. */
  loop: string;
  node: string;
  load: number[];
  rows: Row[];
  costs: Cost[];
  spansPerAnswer: Record<string, number>;
  /** CPU per answer by thread, by variant (threadsOf). */
  threads: Record<string, ThreadCpu>;
}

export function print(out: Out, r: TracingReport): void {
  out(`\nTracing cost per server CPU-second on Node ${r.node} (${r.loop}; baseline: ${r.baseline}):`);
  out(`load average (1, 5, 15 min) before: ${r.load.slice(0, 3).join(', ')}; after: ${r.load.slice(3).join(', ')}\n`);
  const variants = VARIANTS.filter((v) => r.variants.includes(v.name));
  const others = variants.slice(1);
  const last = others[others.length - 1]!;
  out(
    table(
      [
        'workload',
        'no SDK CPU/req',
        ...others.map((v) => `${v.label} CPU/req (cost)`),
        `req/s no SDK -> ${last.label}`,
        `CPU 0 used by the ${variants.length}`,
      ],
      r.rows.map((row) => [
        row.workload,
        `${row.cpuUs['baseline']!.toFixed(0)} µs`,
        ...others.map((v) => `${row.cpuUs[v.name]!.toFixed(0)} µs (${pct(row.ratio[v.name]! - 1)})`),
        `${fmtInt(row.rps['baseline']!)} -> ${fmtInt(row.rps[last.name]!)}`,
        `${(row.busy * 100).toFixed(0)} %${row.busy > MAX_BUSY ? ' (!)' : ''}`,
      ]),
    ),
  );
  out('');
  out(
    table(
      ['tracing', 'cost: mean of rounds (90 % CI; lowest .. highest round)', 'target', 'spans per answer'],
      r.costs.map((c) => {
        const v = VARIANTS.find((x) => x.name === c.variant)!;
        const spans = r.spansPerAnswer[c.variant];
        return [v.label, spreadOf(c), `${bound(v)} ${c.verdict}`, spans === undefined ? '' : spans.toFixed(2)];
      }),
    ),
  );
  out('\nmet: the interval within the target; NOT met: past it; not resolved: the interval holds the target.');
  out(
    `not judged: a workload's servers used more than ${(MAX_BUSY * 100).toFixed(0)} % of CPU 0, where their ` +
      'open loops queue and batched work hides cost (a slower machine: fewer variants, BENCH_TRACING_VARIANTS, or a ' +
      'lower BENCH_TRACING_RATE, as a run of its own).',
  );
  const us = (value: number) => `${value.toFixed(1)} µs`;
  out('\nServer CPU per answer by thread (medians over rounds and workloads):');
  out(
    table(
      ['tracing', 'main thread', "V8's helper threads", 'worker threads', 'other'],
      variants.map((v) => {
        const t = r.threads[v.name]!;
        return [v.label, us(t.main), us(t.v8), us(t.workers), us(t.other)];
      }),
    ),
  );
  const off = r.costs.find((c) => c.variant === 'off');
  if (off && (off.cost.low > 0 || off.cost.high < 0))
    out(`(!) off runs the baseline's code, yet its interval excludes 0: the servers of one round are not alike.`);
}
