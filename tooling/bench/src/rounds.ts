/**
 * Alternating rounds: every target once per round after a 2 s warm-up each, the order reversed every other round to
 * cancel drift, the server's CPU time per answer read from /proc around each run; medians summarise the rounds.
 */
import type { Bar } from './chart.js';
import { load } from './load-client.js';
import type { LoadRequest, LoadResult, LoadSpec, MixSpec } from './load-spec.js';
import { byThread, cpuMs, type RunningServer, type ThreadCpu, threadCpuMs } from './servers.js';
import { settings } from './settings.js';
import { fmtInt, fmtMs, median } from './stats.js';

export interface Target {
  name: string;
  label: string;
  kind: Bar['kind'];
  server: RunningServer;
  requests: LoadRequest[];
  /** Requests drawn at random from this mix instead (mix.ts). */
  mix?: MixSpec;
}

export type RoundResult = LoadResult & {
  serverCpuUsPerRequest: number;
  /** The same by the threads it ran on (servers.ts threadCpuMs). */
  threadCpuUsPerRequest: ThreadCpu;
};

export interface RoundsOptions {
  seconds: number;
  connections: number;
  rounds: number;
  /** Each target's unmeasured load before the first round (default 2 s). */
  warmupSeconds?: number;
}

/** The run's closed-loop settings (BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_ROUNDS). */
export const ROUNDS: RoundsOptions = {
  seconds: settings.seconds,
  connections: settings.connections,
  rounds: settings.rounds,
};

const closedSpec = (t: Target, connections: number, durationSec: number): LoadSpec => ({
  mode: 'closed',
  origin: t.server.origin,
  requests: t.requests,
  ...(t.mix ? { mix: t.mix } : {}),
  connections,
  durationSec,
});

/** A server's CPU time so far (ms): the process's, and by thread. */
interface CpuReading {
  all: number;
  threads: ThreadCpu;
}

const cpuOf = (pid: number): CpuReading => ({ all: cpuMs(pid), threads: threadCpuMs(pid) });

/** A load's result with its server's CPU time per answer since `before` (read before the load), in all and by thread. */
function withCpu(t: Target, loaded: LoadResult, before: CpuReading): RoundResult {
  const after = cpuOf(t.server.pid);
  const answers = Math.max(1, loaded.ok + loaded.non2xx);
  const per = (to: number, from: number) => ((to - from) * 1000) / answers;
  return {
    ...loaded,
    serverCpuUsPerRequest: per(after.all, before.all),
    threadCpuUsPerRequest: byThread((group) => per(after.threads[group], before.threads[group])),
  };
}

/** Runs every target once per round, alternating the order each round; returns results by target name. */
export async function rounds(targets: Target[], opts: RoundsOptions = ROUNDS): Promise<Map<string, RoundResult[]>> {
  const out = new Map<string, RoundResult[]>(targets.map((t) => [t.name, []]));
  for (const t of targets) await load(closedSpec(t, opts.connections, opts.warmupSeconds ?? 2)); // warm-up
  for (let r = 0; r < opts.rounds; r++) {
    const order = r % 2 === 0 ? targets : [...targets].reverse();
    for (const t of order) {
      const before = cpuOf(t.server.pid);
      const res = withCpu(t, await load(closedSpec(t, opts.connections, opts.seconds)), before);
      out.get(t.name)!.push(res);
      printRound(r, t, res);
    }
  }
  return out;
}

/**
 * Every target loaded at once, each by its own generator, for `seconds`; each server's CPU per answer is read over that
 * one window. Whatever else the machine does meanwhile (another tenant, a change of clock) falls on all of them alike,
 * where one after the other it would not: for comparing variants of one server whose difference is smaller than that
 * noise. Each target gets its own `loop`. The servers share their CPUs, so figures are comparable within a call, not
 * with rounds(). Printed as round `round` when given (not for a warm-up).
 */
export async function together(targets: Target[], seconds: number, loop: Loop, round?: number) {
  const { connections, rate } = loop;
  const startAt = Date.now() + TOGETHER_START_MS;
  const spec = (t: Target): LoadSpec =>
    rate === undefined
      ? closedSpec(t, connections, seconds)
      : { ...closedSpec(t, connections, seconds), mode: 'open', rate, startAt, graceSec: 2 };
  const before = targets.map((t) => cpuOf(t.server.pid));
  const loaded = await Promise.all(targets.map((t) => load(spec(t))));
  const out = new Map<string, RoundResult>();
  targets.forEach((t, i) => {
    const res = withCpu(t, loaded[i]!, before[i]!);
    out.set(t.name, res);
    if (round === undefined) return;
    printRound(round, t, res);
    // Only a measured window is judged: fresh servers warming up may lag behind their rate, and no figure comes of it.
    if (rate !== undefined && (res.dueRps ?? 0) < rate * KEPT_UP) {
      const served = fmtInt(res.dueRps ?? 0);
      console.log(`  (!) ${t.label}: ${served} of ${rate} req/s served: saturated, not the cost at that rate`);
    }
  });
  return out;
}

/**
 * How together() loads each target: a closed loop of `connections`, or, with `rate`, an open loop at `rate` req/s on
 * that many sockets, the targets' generators starting together.
 */
export interface Loop {
  connections: number;
  rate?: number | undefined;
}

/** How long after together() is called its open-loop generators start: long enough for all of them to be forked. */
const TOGETHER_START_MS = 1500;
/** An open-loop target serving less than this share of its rate while it is due has fallen behind (saturated). */
const KEPT_UP = 0.95;

function printRound(r: number, t: Target, res: RoundResult): void {
  const bad =
    res.non2xx + res.errors > 0
      ? `  (!) non-2xx ${res.non2xx}, errors ${res.errors} ${JSON.stringify(res.statusCodes)}`
      : '';
  console.log(
    `  round ${r + 1}  ${t.label.padEnd(38)} ${fmtInt(res.rps).padStart(7)} req/s   p50 ${fmtMs(res.p50)}  p99 ${fmtMs(res.p99)}  server CPU ${res.serverCpuUsPerRequest.toFixed(0)} µs/req${bad}`,
  );
}

export interface Summary {
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

export function summarise(t: Pick<Target, 'name' | 'label' | 'kind'>, results: RoundResult[]): Summary {
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

/** Rounds of the targets, summarised, by target name. */
export async function measure(targets: Target[], opts: RoundsOptions = ROUNDS): Promise<Map<string, Summary>> {
  const res = await rounds(targets, opts);
  return new Map(targets.map((t) => [t.name, summarise(t, res.get(t.name)!)]));
}
