/**
 * The capacity the overload scenario scales its steps by: the highest rate the open loop of the steps themselves
 * (the crowd's reads on CROWD_SOCKETS connections, shedding off) is served at within a latency bound. A closed loop
 * measures something else: with fewer connections than the crowd's it batches less per turn of the server's loop and
 * understates the rate, and with as many it holds the server saturated, a rate an open loop cannot be served at
 * without a standing queue. So a search, in the same run: from a closed loop's figure, up by RAISE while a rate is
 * served, then halving the interval between the best rate served and the lowest one not. Each rate is tried for as
 * long as a step lasts (a second to open connections, then settings.overloadStepSeconds counted): a rate a little
 * above what the server sustains passes a short probe before its queue has grown. A rate not served is tried once
 * more before the search takes it as the bound: every later rate stays below a rate refused, so one probe spoiled by a
 * pause of the machine's (a neighbour's burst, a collection) would cap the figure for the whole run.
 */
import { baselineServer } from './bench-servers.js';
import type { LoadResult, LoadSpec } from './load-spec.js';
import { load } from './load-client.js';
import { CROWD_SOCKETS, pin, reads, type OverloadServer, type Traffic } from './overload-steps.js';
import { cpuMs } from './servers.js';
import { settings } from './settings.js';

/** A rate is served when at least this share of its requests got a 2xx... */
export const CAPACITY_SERVED = 0.99;
/** ... and their p99, from the intended send time, stayed within this (ms). */
export const CAPACITY_P99_MS = 100;
const RAISE = 1.25;
/** The search stops when the rate not served is within this ratio of the rate served, or after MAX_PROBES rates. */
const PRECISION = 1.05;
const MAX_PROBES = 7;

export interface CapacityProbe {
  rate: number;
  served: boolean;
  result: LoadResult;
}

export interface Capacity {
  /** The highest rate served (req/s). */
  rps: number;
  /** The closed loop's figure the search started from (settings.connections connections). */
  closedRps: number;
  probes: CapacityProbe[];
}

const servedShare = (r: LoadResult) => r.ok / Math.max(1, r.ok + r.non2xx + r.errors);

async function tryRate(s: OverloadServer, traffic: Traffic, rate: number): Promise<CapacityProbe> {
  const result = await load({
    mode: 'open',
    origin: s.server.origin,
    requests: [],
    mix: reads(traffic.free),
    connections: CROWD_SOCKETS,
    durationSec: 1 + settings.overloadStepSeconds,
    warmupSec: 1,
    rate,
    graceSec: 2,
  });
  // Let the server finish what a rate too high left queued before the next one.
  await new Promise((r) => setTimeout(r, 1000));
  return { rate, served: servedShare(result) >= CAPACITY_SERVED && result.p99 <= CAPACITY_P99_MS, result };
}

export async function capacity(s: OverloadServer, traffic: Traffic): Promise<Capacity> {
  const closed = (durationSec: number) =>
    load({
      mode: 'closed',
      origin: s.server.origin,
      requests: [],
      mix: reads(traffic.free),
      connections: settings.connections,
      durationSec,
    });
  await closed(1);
  const closedRps = (await closed(3)).rps;
  const probes: CapacityProbe[] = [];
  let [best, worst, rate] = [0, Infinity, Math.round(closedRps)];
  let rates = 0;
  while (rates < MAX_PROBES && worst / Math.max(1, best) > PRECISION) {
    rates++;
    let probe = await tryRate(s, traffic, rate);
    probes.push(probe);
    if (!probe.served) probes.push((probe = await tryRate(s, traffic, rate)));
    if (probe.served) best = rate;
    else worst = rate;
    if (worst === Infinity) rate = Math.round(rate * RAISE);
    else if (best === 0) rate = Math.round(rate / RAISE);
    else rate = Math.round((best + worst) / 2);
  }
  return { rps: best, closedRps, probes };
}

/**
 * What the cheapest answer node:http can give costs: server CPU per answer (µs) of bare node:http answering a canned
 * page (the ceiling baseline, no framework, key or limiter), on the server's CPU, offered `rate` by the crowd's open
 * loop for a step. A shed answer cannot cost less than this, which bounds the goodput shedding can keep at 2x and 4x.
 * Offer the highest step's rate: an answer costs less on a busy loop, whose every wake-up reads many sockets, than on
 * one that wakes for each request.
 */
export async function bareAnswerMicros(traffic: Traffic, rate: number): Promise<number> {
  const server = await baselineServer('overload-bare-answer', 'ceiling');
  try {
    pin(server.pid, 'server');
    const spec: Omit<LoadSpec, 'durationSec'> = {
      mode: 'open',
      origin: server.origin,
      requests: [],
      mix: reads(traffic.free),
      connections: CROWD_SOCKETS,
      rate,
    };
    await load({ ...spec, durationSec: 1 });
    const before = cpuMs(server.pid);
    const result = await load({ ...spec, durationSec: settings.overloadStepSeconds });
    return ((cpuMs(server.pid) - before) * 1000) / (result.ok + result.non2xx);
  } finally {
    await server.stop();
  }
}
