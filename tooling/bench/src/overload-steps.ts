/**
 * The overload scenario's steps (issue #25 §4): offered load in an open loop (at multiples of the capacity that
 * overload-capacity.ts measures), as several load generators at once (load-client.ts): many Free keys drawing the mixed
 * workload's reads, a steady Enterprise trickle, `/healthz` probes on a new connection each on the API port and on
 * OPS_PORT, and in one step one key holding 500 requests in flight.
 */
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';
import { load } from './load-client.js';
import type { LoadResult, LoadSpec, MixSpec } from './load-spec.js';
import { CATALOGUE_SIZE } from './page.js';
import { list } from './requests.js';
import { counters, cpuShares, settle, since, watchShedder, type Collections } from './overload-metrics.js';
import type { RunningServer } from './servers.js';
import { settings } from './settings.js';

/** A server of the scenario: its API origin, its OPS_PORT origin, and whether it sheds. */
export interface OverloadServer {
  server: RunningServer;
  opsOrigin: string;
  shedding: boolean;
}

export interface Traffic {
  /** The Free keys of the crowd. */
  free: string[];
  /** The Enterprise key of the trickle. */
  enterprise: string;
  /** A Free key of its own, for the step where one key holds 500 requests in flight. */
  noisy: string;
}

/** The Enterprise trickle (req/s): steady, and a small share of any capacity. */
export const TRICKLE_RATE = 50;
/** Probes a second on each port, each on a new connection as a kubelet sends them. */
const PROBE_RATE = 20;
/** Sockets of the Free crowd's generator: many apps, each with its connections. */
export const CROWD_SOCKETS = 200;
/** A client's patience: answers not back this long after the step's last request count as failed. */
const GRACE_SEC = 5;
/** Every generator of a step starts this long after the step is set up (their start-ups out of the way)... */
const START_DELAY_MS = 1500;
/** ... and its first second (connections opening) is sent but not counted. */
const WARMUP_SEC = 1;
/** The noisy key: requests in flight at once, sent again as soon as each is answered. */
export const NOISY_CONNECTIONS = 500;

/**
 * The mixed workload's reads (mix.ts): varied pages, nearly every one different, of 100 pets each. Read that way (and
 * with SQLite's caches off, see the scenario), a list costs the server several times what it costs the load generator,
 * so one CPU of generators can offer 4x what one CPU of server can answer.
 */
export const PAGE_LIMIT = 100;
export const reads = (keys: string[]): MixSpec => ({
  keys,
  createPercent: 0,
  maxId: CATALOGUE_SIZE,
  limit: PAGE_LIMIT,
});

export interface StepResult {
  /** Offered load as a share of capacity (0 for the trickle alone). */
  factor: number;
  noisy: boolean;
  durationSec: number;
  crowd?: LoadResult;
  trickle: LoadResult;
  healthApi: LoadResult;
  healthOps: LoadResult;
  noisyLoad?: LoadResult;
  /** Server CPU over the step, in share of one core. */
  serverCpu: number;
  /**
   * The server's main thread's share of it: the rest is its other threads', V8's above all (compilers, concurrent
   * marking and sweeping), which on the server's one CPU take their time from the event loop.
   */
  mainThreadCpu: number;
  /** The server's major (mark-compact) collections from the step's start to its end: how many, and their pauses. */
  collections: Collections;
  /** Shedding on: answers shed during the step by the signal that was past its threshold (the server's metric). */
  shedBy?: Record<string, number>;
  /** Shedding on: the shed level and the event-loop delay (ms) the shedder saw, halfway through the step. */
  shedder?: { level: number; delayMs: number };
}

const open = (origin: string, rate: number, startAt: number, extra: Partial<LoadSpec>): LoadSpec => ({
  mode: 'open',
  origin,
  requests: [],
  connections: 8,
  durationSec: WARMUP_SEC + settings.overloadStepSeconds,
  warmupSec: WARMUP_SEC,
  startAt,
  rate,
  graceSec: GRACE_SEC,
  ...extra,
});

/** One step: the crowd at `factor` x capacity (less the trickle), the trickle and the probes, at once. */
export async function step(
  s: OverloadServer,
  traffic: Traffic,
  capacity: number,
  factor: number,
  noisy = false,
): Promise<StepResult> {
  if (s.shedding) await settle(s);
  const before = await counters(s);
  const origin = s.server.origin;
  const health = { requests: [{ method: 'GET' as const, path: '/healthz' }], keepAlive: false, connections: 20 };
  const crowdRate = factor * capacity - TRICKLE_RATE;
  const startAt = Date.now() + START_DELAY_MS;
  const crowdSpec = { mix: reads(traffic.free), connections: CROWD_SOCKETS };
  const loads = Promise.all([
    factor > 0 ? load(open(origin, crowdRate, startAt, crowdSpec)) : undefined,
    load(open(origin, TRICKLE_RATE, startAt, { mix: reads([traffic.enterprise]) })),
    load(open(origin, PROBE_RATE, startAt, health)),
    load(open(s.opsOrigin, PROBE_RATE, startAt, health)),
    noisy
      ? load({
          mode: 'closed',
          origin,
          requests: [list(traffic.noisy)],
          connections: NOISY_CONNECTIONS,
          durationSec: START_DELAY_MS / 1000 + WARMUP_SEC + settings.overloadStepSeconds,
        })
      : undefined,
  ]);
  // Server CPU over the counted part of the step. Starting the loads can take past the warm-up's end on a saturated
  // server (the noisy key's connections with shedding off): then the window starts at once.
  await new Promise((r) => setTimeout(r, Math.max(0, startAt + WARMUP_SEC * 1000 - Date.now())));
  const cpu = cpuShares(s.server.pid);
  const watched = watchShedder(s, (settings.overloadStepSeconds * 1000) / 2);
  await new Promise((r) => setTimeout(r, settings.overloadStepSeconds * 1000));
  const { serverCpu, mainThreadCpu } = cpu();
  const [crowd, trickle, healthApi, healthOps, noisyLoad] = await loads;
  const shedder = await watched;
  const { shedBy, collections } = since(await counters(s), before);
  return {
    factor,
    noisy,
    durationSec: settings.overloadStepSeconds,
    ...(crowd ? { crowd } : {}),
    trickle,
    healthApi,
    healthOps,
    ...(noisyLoad ? { noisyLoad } : {}),
    serverCpu,
    mainThreadCpu,
    collections,
    ...(s.shedding ? { shedBy, shedder } : {}),
  };
}

/**
 * Runs `pid` (all its threads) on the CPUs of `list` (taskset), on a machine of 2 CPUs or more: the scenario puts the
 * server under test on CPU 0 and itself, so every load generator it forks, on CPU 1, as the operator did.
 */
export function pin(pid: number, list: 'server' | 'load' | 'all'): void {
  const n = cpus().length;
  if (n < 2) return;
  const mask = list === 'server' ? '0' : list === 'load' ? `1-${n - 1}` : `0-${n - 1}`;
  execFileSync('taskset', ['-a', '-p', '-c', mask, String(pid)], { stdio: 'ignore' });
}

/** How long each server carries the crowd's reads at the capacity, unmeasured, before its first step (s). */
const WARM_LOAD_SECONDS = 20;

/**
 * Load a server carries, unmeasured, right before its first step: the crowd's reads at `rate` (the capacity) for
 * WARM_LOAD_SECONDS. The server with shedding off has carried the capacity search, a minute or more near capacity;
 * without this, the one with it on would meet its first steps with its code not yet optimized and its young generation
 * still growing, and be judged by the latency and CPU of its own warm-up. On the crowd's own keys (`keys`), which
 * warmKeys cached: the key cache holds 10,000, and the search's keys would push them out. It costs each key a few
 * requests of its minute's limit.
 */
export async function warmLoad(s: OverloadServer, keys: string[], rate: number): Promise<void> {
  await load({
    mode: 'open',
    origin: s.server.origin,
    requests: [],
    mix: reads(keys),
    connections: CROWD_SOCKETS,
    rate,
    durationSec: WARM_LOAD_SECONDS,
    graceSec: 2,
  });
}

/** warmKeys: passes over every key before giving up on a server that still refuses some. */
const WARM_PASSES = 6;

/**
 * Every key, so each is in the server's key cache before anything is measured. A shedding server refuses much of a
 * cold pass before looking its keys up (uncached keys cost a lookup each, and the gate sheds at its hard level without
 * reading the key), so passes are repeated, each at half the rate of the one before, until one is answered 2xx
 * throughout: a key answered 2xx was looked up and cached. Each pass costs every key one request of its rate limit.
 */
export async function warmKeys(s: OverloadServer, keys: string[]): Promise<void> {
  const requests = keys.map((k) => list(k, '?limit=10'));
  for (let pass = 1, rate = 5000; ; pass++, rate /= 2) {
    const result = await load({
      mode: 'open',
      origin: s.server.origin,
      requests,
      connections: 50,
      rate,
      durationSec: keys.length / rate,
    });
    const refused = result.non2xx + result.errors;
    if (refused === 0 && result.ok >= keys.length) return;
    if (pass === WARM_PASSES)
      throw new Error(`${s.server.name}: ${refused} of ${keys.length} keys still refused after ${pass} warm-up passes`);
  }
}
