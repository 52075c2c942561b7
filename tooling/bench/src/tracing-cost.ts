/**
 * The tracing scenario's figures (scenarios/tracing.ts): its variants and targets, the cost of each variant per round
 * and per workload against the baseline of the same round, and the printed report. A variant's cost is the median over
 * rounds of the round's geometric mean over workloads of CPU per answer against the baseline; the spread is the
 * lowest and highest round. The `off` variant runs the baseline's code, so its spread is the bench's resolution: when it
 * is wider than a target, the bench cannot tell that target met from missed, and the report says so.
 */
import type { RoundResult } from './rounds.js';
import type { Out } from './scenario.js';
import { fmtInt, median } from './stats.js';
import { check, table } from './table.js';

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

export interface Row {
  workload: string;
  /** Median server CPU per answer (µs) and req/s by variant. */
  cpuUs: Record<string, number>;
  rps: Record<string, number>;
  /** Median over rounds of the variant's CPU per answer over the baseline's in the same round. */
  ratio: Record<string, number>;
}

/** Results of one workload, by variant, one per round in round order. */
export type WorkloadResults = Map<string, RoundResult[]>;

export function rowOf(workload: string, byVariant: WorkloadResults): Row {
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

export interface Cost {
  variant: string;
  /** Median over rounds of the round's cost; lowest and highest round. */
  cost: number;
  low: number;
  high: number;
  target: number;
  met: boolean;
}

/** A variant's cost in each round (geometric mean over workloads), summarised over the rounds. */
export function costOf(v: Variant, workloads: WorkloadResults[]): Cost {
  const roundsRun = workloads[0]!.get(v.name)!.length;
  const perRound = Array.from({ length: roundsRun }, (_, r) =>
    geomean(
      workloads.map((w) => w.get(v.name)![r]!.serverCpuUsPerRequest / w.get('baseline')![r]!.serverCpuUsPerRequest),
    ),
  ).map((ratio) => ratio - 1);
  const cost = median(perRound);
  const target = v.target!;
  return {
    variant: v.name,
    cost,
    low: Math.min(...perRound),
    high: Math.max(...perRound),
    target,
    met: v.name === 'off' ? cost < target : cost <= target,
  };
}

export const bound = (v: Variant) => `${v.name === 'off' ? '<' : '<='} ${(v.target! * 100).toFixed(0)} %`;
const pct = (share: number) => `${share >= 0 ? '+' : ''}${(share * 100).toFixed(1)} %`;
export const spreadOf = (c: Cost) => `${pct(c.cost)} (rounds ${pct(c.low)} .. ${pct(c.high)})`;

export interface TracingReport {
  baseline: string;
  /** How each server was loaded: open loops at a rate, or closed loops. */
  loop: string;
  node: string;
  load: number[];
  rows: Row[];
  costs: Cost[];
  spansPerAnswer: Record<string, number>;
}

/** The half-width of off's round spread: the smallest cost difference the run can resolve. */
export const resolution = (costs: Cost[]) => {
  const off = costs.find((c) => c.variant === 'off')!;
  return Math.max(Math.abs(off.low), Math.abs(off.high));
};

export function print(out: Out, r: TracingReport): void {
  out(`\nTracing cost per server CPU-second on Node ${r.node} (${r.loop}; baseline: ${r.baseline}):`);
  out(`load average (1, 5, 15 min) before: ${r.load.slice(0, 3).join(', ')}; after: ${r.load.slice(3).join(', ')}\n`);
  const others = VARIANTS.slice(1);
  out(
    table(
      ['workload', 'no SDK CPU/req', ...others.map((v) => `${v.label} CPU/req (cost)`), 'req/s no SDK -> 100 %'],
      r.rows.map((row) => [
        row.workload,
        `${row.cpuUs['baseline']!.toFixed(0)} µs`,
        ...others.map((v) => `${row.cpuUs[v.name]!.toFixed(0)} µs (${pct(row.ratio[v.name]! - 1)})`),
        `${fmtInt(row.rps['baseline']!)} -> ${fmtInt(row.rps['100']!)}`,
      ]),
    ),
  );
  out('');
  out(
    table(
      ['tracing', 'cost: median of rounds (lowest .. highest)', 'target', 'spans per answer'],
      r.costs.map((c) => {
        const v = VARIANTS.find((x) => x.name === c.variant)!;
        const spans = r.spansPerAnswer[c.variant];
        return [v.label, spreadOf(c), `${bound(v)} ${check(c.met)}`, spans === undefined ? '' : spans.toFixed(2)];
      }),
    ),
  );
  const noise = resolution(r.costs);
  out(`\noff runs the baseline's code: its rounds within ±${(noise * 100).toFixed(1)} % are this run's noise.`);
  for (const c of r.costs.filter((x) => noise >= x.target))
    out(`(!) the noise is as wide as the ${VARIANTS.find((x) => x.name === c.variant)!.label} target: not resolved.`);
}
