/**
 * The overload scenario's report: a table per setup (both servers' steps) and the issue's targets, judged on the server
 * with shedding on. "Admitted" latencies are the Free crowd's 2xx answers, from each request's intended send time.
 */
import type { LoadResult } from './load-spec.js';
import { NOISY_CONNECTIONS, type StepResult } from './overload-steps.js';
import { fmtInt, fmtMs, fmtRatio } from './stats.js';
import { check, table } from './table.js';

/** How a capacity set by BENCH_OVERLOAD_CAPACITY is described, where a searched one tells how it was found. */
export const CAPACITY_GIVEN = 'given by BENCH_OVERLOAD_CAPACITY, not measured';

export interface SetupReport {
  name: string;
  label: string;
  /** The highest open-loop rate served within the latency bound, shedding off (overload-capacity.ts). */
  capacity: number;
  /** A closed loop's figure on the same server, for comparison; undefined when the capacity was given, not searched. */
  closedCapacity: number | undefined;
  /** Server CPU per answer (µs) of bare node:http under the crowd's open loop (overload-capacity.ts). */
  bareAnswerUs: number;
  /**
   * Each server left idle, its keys cached: CPU (ms a second) and its main thread's wake-ups a second, what shedding's
   * own timers cost when nothing comes.
   */
  idle: Record<'on' | 'off', { cpuMs: number; wakeups: number }>;
  on: StepResult[];
  off: StepResult[];
}

const sent = (r: LoadResult) => r.ok + r.non2xx + r.errors;
const shareOf = (r: LoadResult, n: number) => (sent(r) === 0 ? NaN : n / sent(r));
const shed = (r: LoadResult) => shareOf(r, r.statusCodes['503'] ?? 0);
const refused = (r: LoadResult) => shareOf(r, r.statusCodes['429'] ?? 0);
/**
 * Failed: answered with another error than a shed or a refusal, or a connection closed or failed under its request,
 * or an answer the generator could not read (a closed loop's errors, which it does not tell apart, all count here).
 */
const failed = (r: LoadResult) => {
  const other = r.non2xx - (r.statusCodes['503'] ?? 0) - (r.statusCodes['429'] ?? 0);
  const u = r.unanswered;
  return shareOf(r, other + (u ? u.closed + u.error + u.unparsed : r.errors));
};
/** Lost: sent, and no answer within the client's patience. */
const lost = (r: LoadResult) => shareOf(r, r.unanswered?.late ?? 0);
/** Never sent: still queued in the generator for one of its connections when the step ended (the server never saw it). */
const unsent = (r: LoadResult) => shareOf(r, r.unanswered?.unsent ?? 0);
const success = (r: LoadResult) => shareOf(r, r.ok);
const pct = (n: number) => (Number.isFinite(n) ? `${(n * 100).toFixed(n > 0 && n < 0.01 ? 2 : 1)} %` : 'n/a');
/** A probe's p99, or `n/a` when a probe went unanswered or failed (a p99 of the answered ones would hide it). */
const probeP99 = (r: LoadResult) => (r.non2xx + r.errors > 0 ? NaN : r.p99);
/** 2xx answers a second while the step's load was offered (dueRps): a backlog drained after it does not count. */
const servedRps = (r: LoadResult) => r.dueRps ?? r.rps;
const goodput = (s: StepResult) => (s.crowd ? servedRps(s.crowd) : 0) + servedRps(s.trickle);

const SIGNAL_NAMES: Record<string, string> = {
  event_loop_delay: 'delay',
  event_loop_turn: 'turn',
  request_wait: 'wait',
  event_loop_utilization: 'ELU',
  requests_in_flight: 'in flight',
  db_pool_queue: 'pool',
};

/** What the server shed during a step, by the signal past its threshold, e.g. `event_loop_delay 80 %`. */
export function shedReasons(s: StepResult): string {
  const entries = Object.entries(s.shedBy ?? {}).filter(([, n]) => n > 0);
  const total = entries.reduce((sum, [, n]) => sum + n, 0);
  return entries.map(([reason, n]) => `${SIGNAL_NAMES[reason] ?? reason} ${pct(n / total)}`).join(', ');
}

export const stepName = (s: StepResult) =>
  s.factor === 0 ? 'trickle alone' : `${s.factor}x${s.noisy ? ` + ${NOISY_CONNECTIONS} from one key` : ''}`;

/** The server's major collections during a step, e.g. `3 (41.2 ms)`: their count and pauses. */
const majorGcs = (s: StepResult) => `${s.collections.major} (${fmtMs(s.collections.pauseMs)})`;

/** The progress line of a step. */
export function stepLine(label: string, s: StepResult): string {
  const c = s.crowd;
  const crowd = c
    ? `goodput ${fmtInt(goodput(s))}/s  Free shed ${pct(shed(c))} 429 ${pct(refused(c))} failed ${pct(failed(c))} lost ${pct(lost(c))} unsent ${pct(unsent(c))}  p50 ${fmtMs(c.p50)} p99 ${fmtMs(c.p99)} p99.9 ${fmtMs(c.p999)}  send lag p99 ${fmtMs(c.sendLagP99 ?? NaN)}`
    : '';
  return (
    `  ${label}, ${stepName(s).padEnd(22)} ${crowd}  Ent ok ${pct(success(s.trickle))} p99 ${fmtMs(s.trickle.p99)} (send lag ${fmtMs(s.trickle.sendLagP99 ?? NaN)})` +
    `  /healthz p99 ${fmtMs(s.healthApi.p99)} (ops ${fmtMs(s.healthOps.p99)}, failed ${s.healthApi.non2xx + s.healthApi.errors}/${s.healthOps.non2xx + s.healthOps.errors})  server CPU ${pct(s.serverCpu)} (main thread ${pct(s.mainThreadCpu)})  major GCs ${majorGcs(s)}  shed by: ${shedReasons(s) || '-'}` +
    (s.shedder ? `  level ${s.shedder.level.toFixed(2)} delay ${fmtMs(s.shedder.delayMs)}` : '')
  );
}

function row(r: SetupReport, shedding: boolean, s: StepResult): string[] {
  const c = s.crowd;
  const dash = (f: (x: LoadResult) => string) => (c ? f(c) : '');
  return [
    `${shedding ? 'on' : 'off'}, ${stepName(s)}`,
    fmtInt(s.factor * r.capacity),
    c ? `${fmtInt(goodput(s))} (${fmtRatio(goodput(s) / r.capacity)})` : '',
    dash((x) => `${pct(shed(x))} / ${pct(refused(x))} / ${pct(failed(x))} / ${pct(lost(x))} / ${pct(unsent(x))}`),
    dash((x) => fmtMs(x.p50)),
    dash((x) => fmtMs(x.p99)),
    dash((x) => fmtMs(x.p999)),
    `${pct(success(s.trickle))} (${pct(shed(s.trickle))})`,
    fmtMs(s.trickle.p99),
    fmtMs(probeP99(s.healthApi)),
    fmtMs(probeP99(s.healthOps)),
    `${pct(s.serverCpu)} (${pct(s.mainThreadCpu)})`,
    majorGcs(s),
    dash((x) => fmtMs(x.sendLagP99 ?? NaN)),
    shedReasons(s),
  ];
}

/** The setup's table: every step of the server with shedding on, then of the one with it off. */
export function overloadTable(r: SetupReport): string {
  const rows = [...r.on.map((s) => row(r, true, s)), ...r.off.map((s) => row(r, false, s))];
  const capacity =
    r.closedCapacity === undefined
      ? CAPACITY_GIVEN
      : `the open loop's highest rate served within its latency bound, shedding off; a closed loop got ${fmtInt(r.closedCapacity)}`;
  return [
    `\nOverload, ${r.label}: capacity ${fmtInt(r.capacity)} req/s (${capacity}); bare node:http's answer ${r.bareAnswerUs.toFixed(1)} µs of server CPU; idle, shedding on ${idleOf(r.idle.on)}, off ${idleOf(r.idle.off)}; latency from the intended send time:\n`,
    table(
      [
        'shedding, offered',
        'req/s',
        'goodput (x cap)',
        'Free shed / 429 / failed / lost / unsent',
        'p50',
        'p99',
        'p99.9',
        'Ent ok (shed)',
        'Ent p99',
        '/healthz p99',
        'ops p99',
        'server CPU (main thread)',
        'major GCs (pause)',
        'send lag p99',
        'shed by',
      ],
      rows,
    ),
  ].join('\n');
}

const idleOf = (idle: SetupReport['idle']['on']) =>
  `${idle.cpuMs.toFixed(1)} ms of CPU and ${fmtInt(idle.wakeups)} wake-ups a second`;

const at = (steps: StepResult[], factor: number, noisy = false) =>
  steps.find((s) => s.factor === factor && s.noisy === noisy);

/**
 * The most goodput (x capacity) the server's CPU allows at `factor` x capacity if every refusal cost what bare
 * node:http's answer costs: A lists of L µs and (factor - A) refusals of F µs in each capacity's worth of a second,
 * A = (1e6 / capacity - factor F) / (L - F), L the server CPU per answer with shedding off at 1x. Above 1: the CPU is
 * not what bounds it (the database is).
 */
function goodputBound(r: SetupReport, s: StepResult): string {
  const one = at(r.off, 1);
  if (!one || !Number.isFinite(r.bareAnswerUs)) return '';
  const list = (one.serverCpu * 1e6) / goodput(one);
  const bound = (1e6 / r.capacity - s.factor * r.bareAnswerUs) / (list - r.bareAnswerUs);
  return ` (a refusal as cheap as bare node:http's answer, ${r.bareAnswerUs.toFixed(1)} µs against a list's ${list.toFixed(0)} µs, would allow ${bound >= 1 ? 'all of it' : `at most ${pct(Math.max(0, bound))}`}; this step's answers, refusals included, cost ${cpuPerAnswerUs(s).toFixed(1)} µs each)`;
}

/**
 * Server CPU per answer (µs) over a step without the noisy key: every answer its open loops counted (the crowd's, the
 * trickle's, the probes'), shed or not. Set against bare node:http's answer, it shows what a refusal costs beyond it.
 */
function cpuPerAnswerUs(s: StepResult): number {
  const answers = [s.crowd, s.trickle, s.healthApi, s.healthOps].reduce((n, r) => n + (r ? r.ok + r.non2xx : 0), 0);
  return (s.serverCpu * s.durationSec * 1e6) / answers;
}

/** The issue's targets, on the server with shedding on (not judged when a subset of the steps ran). */
export function overloadTargets(r: SetupReport): string[] {
  const [half, alone, two, four, noisy] = [at(r.on, 0.5), at(r.on, 0), at(r.on, 2), at(r.on, 4), at(r.on, 0.5, true)];
  const l = r.label;
  if (!half || !alone || !two || !four || !noisy) return [`${l}: a subset of the steps ran: targets not judged`];
  const high = [two, four];
  const loaded = r.on.filter((s) => s.factor > 0);
  const lines = high.map((s) => {
    const ratio = goodput(s) / r.capacity;
    return `${s.factor}x: goodput >= 90 % of capacity (${l}): ${fmtInt(goodput(s))} of ${fmtInt(r.capacity)} req/s = ${pct(ratio)}${goodputBound(r, s)} -> ${check(ratio >= 0.9)}`;
  });
  const p99s = high.map((s) => s.crowd!.p99 / half.crowd!.p99);
  lines.push(
    `2x / 4x: admitted p99 <= 3x its p99 at 0.5x (${l}): ${high.map((s) => fmtMs(s.crowd!.p99)).join(' / ')} against ${fmtMs(half.crowd!.p99)} = ${p99s.map(fmtRatio).join(' / ')} -> ${check(p99s.every((x) => x <= 3))}`,
  );
  for (const [port, of] of [
    ['API port', (s: StepResult) => probeP99(s.healthApi)],
    ['OPS_PORT', (s: StepResult) => probeP99(s.healthOps)],
  ] as const) {
    const p99 = high.map(of);
    lines.push(
      `2x / 4x: /healthz p99 < 50 ms on the ${port} (${l}): ${p99.map(fmtMs).join(' / ')} -> ${check(p99.every((x) => x < 50))}`,
    );
  }
  const worstOk = Math.min(...loaded.map((s) => success(s.trickle)));
  const worstP99 = Math.max(...loaded.map((s) => s.trickle.p99));
  lines.push(
    `Enterprise trickle >= 99 % success at every load (${l}): worst ${pct(worstOk)} -> ${check(worstOk >= 0.99)}`,
    `Enterprise trickle p99 <= 2x unloaded (${l}): worst ${fmtMs(worstP99)} against ${fmtMs(alone.trickle.p99)} = ${fmtRatio(worstP99 / alone.trickle.p99)} -> ${check(worstP99 <= 2 * alone.trickle.p99)}`,
  );
  // The others must still be served: a p99 of the few not shed would hide that they were shed (NaN: none served).
  const noisyRatio = noisy.crowd!.p99 / half.crowd!.p99;
  const served = success(noisy.crowd!);
  lines.push(
    `one key with ${NOISY_CONNECTIONS} in flight: the others' p99 <= 2x, >= 99 % of them served (${l}): ${fmtMs(noisy.crowd!.p99)} against ${fmtMs(half.crowd!.p99)} = ${fmtRatio(noisyRatio)}, ${pct(served)} served (Enterprise p99 ${fmtMs(noisy.trickle.p99)}) -> ${check(noisyRatio <= 2 && served >= 0.99)}`,
  );
  return lines;
}
