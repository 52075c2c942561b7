/**
 * How saturated the process is, from its own signals, and the shed level that follows: the controller of load
 * shedding (admission.ts applies the level to each request).
 */

/** The process's own signals, sampled by monitor.ts. */
export interface SaturationSignals {
  /**
   * How late the event loop ran its timers, on average over the sample (ms): each turn of a busy loop makes the next
   * ones wait, so this is the queueing a request that arrives now meets inside the process.
   */
  readonly eventLoopDelayMs: number;
  /** Share of the last sample period the event loop was busy (0..1). */
  readonly eventLoopUtilization: number;
  /** Requests admitted and not yet finished. */
  readonly inFlight: number;
  /** Queries waiting for a database pool connection (PostgreSQL; 0 on SQLite). */
  readonly dbWaiting: number;
  /**
   * How much longer than usual requests answered during the sample stayed in the process (ms; their median time from
   * admission to answer, less the lowest such median seen): a queue inside the process that the loop does not see,
   * requests waiting for the database while the loop idles. 0 when not measured.
   */
  readonly requestWaitMs?: number;
}

/** Where each signal means "saturated" (config's LOAD_SHED_*); 0 leaves in-flight or the pool queue out. */
export interface SaturationThresholds {
  /**
   * The event-loop delay admission holds the loop at by shedding the plans below Enterprise: above it a queue is
   * standing in the process (and behind it, in the clients' connections), so the lowest classes are shed until the
   * delay is back under it.
   */
  readonly targetDelayMs: number;
  /** Past this delay (or the next two thresholds), everything that may be shed is, Enterprise included. */
  readonly eventLoopDelayMs: number;
  readonly maxInFlight: number;
  readonly maxDbWaiting: number;
  /**
   * The share of the time the loop may be busy (counting only the CPU the process used) before admission stops
   * letting more in: while shedding, the shed share falls with the headroom below it. Utilization is no reason to
   * shed by itself: a loop busy all the time and answering in its turn is at capacity, not queueing.
   * A loop busy less than OWN_LOAD of the time with fewer than `minInFlight` requests in flight has no load of its own
   * to shed: a late timer then comes from elsewhere (a neighbour's CPU, a throttled quota) and shedding would refuse
   * requests without making any answer sooner, so the level only falls. A loop kept busy by requests it answers at
   * once (SQLite's synchronous reads hold few in flight) is its own load. minInFlight 0: every sample counts.
   */
  readonly eventLoopUtilization: number;
  readonly minInFlight: number;
}

/** A loop busy less than this share of the time (with few in flight) has no load of its own to shed. */
export const OWN_LOAD = 0.5;

/** The signal names, as the metrics' `reason` label. */
export const SIGNALS = [
  'event_loop_delay',
  'event_loop_turn',
  'request_wait',
  'event_loop_utilization',
  'requests_in_flight',
  'db_pool_queue',
] as const;
export type SignalName = (typeof SIGNALS)[number];

/** What the controller acts on after a sample. */
export interface Pressure {
  /** The standing queueing delay over its target (above 1: a queue stands; shed more of the plans below Enterprise). */
  readonly ratio: number;
  /** The signal that caused the shedding: the hard one most past its threshold, else the event-loop delay. */
  readonly signal: SignalName;
  /** The highest ratio of the hard thresholds (delay, in flight, pool queue): above 1, Enterprise is shed too. */
  readonly queueing: number;
  /** How far the loop's utilization is below its threshold, as a share of it (0 at or above it). */
  readonly headroom: number;
  /** False with few requests in flight and an idle loop (`minInFlight`): the load is not the process's own. */
  readonly own: boolean;
}

/**
 * The requests' wait is held at this many times the loop's target: a request's time in the process spans several
 * turns of the loop (its key, its limits, its query), each of which may wait its turn, and a request that waits for
 * the database with the loop idle delays nobody else; at capacity (1x) requests wait a few turns for the database
 * already, and that is no queue to shed. Nor may it be higher: past capacity the queue grows in the clients, whose
 * connections each hold one request, and the wait in the process stops growing once all of them are busy (requests
 * in flight over the rate answered, Little's law); a target above that plateau never sheds, however far the offered
 * load is past capacity.
 */
export const WAIT_TARGETS = 4;

/** Delays that stood through the last few samples (ms): the loop's, and the requests' wait in the process. */
export interface Standing {
  readonly delayMs: number;
  readonly waitMs: number;
}

/**
 * The pressure of a sample. `standing` holds the delays that stood through the last few samples (the lowest of them,
 * as CoDel takes the minimum of an interval): a burst or a pause makes a few turns late and passes, a queue that
 * stands keeps every one late. They default to the sample's own. A queue inside the process is either: requests
 * waiting for their turn of the loop, or waiting for the database while the loop idles; only the loop's is a hard
 * threshold (a loop that late delays everything, the probes' answers and Enterprise's too).
 */
export function pressureOf(
  signals: SaturationSignals,
  limits: SaturationThresholds,
  standing: Standing = { delayMs: signals.eventLoopDelayMs, waitMs: signals.requestWaitMs ?? 0 },
): Pressure {
  const hard: [SignalName, number][] = [
    ['event_loop_delay', standing.delayMs / limits.eventLoopDelayMs],
    ['requests_in_flight', limits.maxInFlight > 0 ? signals.inFlight / limits.maxInFlight : 0],
    ['db_pool_queue', limits.maxDbWaiting > 0 ? signals.dbWaiting / limits.maxDbWaiting : 0],
  ];
  let worst = hard[0]!;
  for (const entry of hard) if (entry[1] > worst[1]) worst = entry;
  const busy = limits.eventLoopUtilization;
  const loop = standing.delayMs / limits.targetDelayMs;
  const wait = standing.waitMs / (WAIT_TARGETS * limits.targetDelayMs);
  return {
    ratio: Math.max(loop, wait),
    signal: worst[1] > 1 ? worst[0] : wait > loop ? 'request_wait' : 'event_loop_delay',
    queueing: worst[1],
    headroom: Math.max(0, (busy - signals.eventLoopUtilization) / busy),
    own: signals.inFlight >= limits.minInFlight || signals.eventLoopUtilization >= OWN_LOAD,
  };
}

/** How far a sample's time in process above the baseline moves it up (an hour's changes, not an overload's). */
const BASELINE_DRIFT = 0.0005;

/**
 * The requests' wait in a sample: their median time in the process less the baseline, the lowest such median seen
 * (what a request costs when nothing queues; Netflix's concurrency limits call it the minimum RTT). The baseline
 * follows a lower median at once and a higher one only slowly, so an overload does not become the norm.
 */
export function waitOver(baselineMs: number, medianMs: number): { baselineMs: number; waitMs: number } {
  const next = medianMs < baselineMs ? medianMs : baselineMs + (medianMs - baselineMs) * BASELINE_DRIFT;
  return { baselineMs: next, waitMs: medianMs - next };
}

/**
 * Priority classes, lowest shed first: requests without a valid key, then each plan in order; a create sits half a
 * class above a read of its plan (admission.ts). The shed level runs from 0 (admit everything) to TOP_LEVEL (shed
 * everything that may be shed); a request of class c is shed with probability clamp(level - c, 0, 1).
 */
export const TOP_LEVEL = 5.5;

/**
 * The highest level the delay target alone reaches: every plan below Enterprise (class 4) shed, Enterprise never.
 * Enterprise has that headroom: it is shed only while a hard threshold is passed (the loop far later than its target,
 * too many in flight, the pool's queue), and is let in again as soon as none is.
 */
export const SOFT_CEILING = 4;

/** Half-class slots of the classes below SOFT_CEILING (admission.ts counts offered requests per slot). */
export const SOFT_SLOTS = SOFT_CEILING * 2;

/** The controller's state: the share of the offered traffic below Enterprise that is shed, and the hard part. */
export interface ShedState {
  /** 0..1: shed from the lowest class up, whatever classes the traffic holds (levelFor). */
  readonly share: number;
  /** 0..TOP_LEVEL - SOFT_CEILING: how far above SOFT_CEILING, while a hard threshold is passed. */
  readonly hard: number;
}

/**
 * The share's steps, per sample: up by SHARE_RISE_GAIN times the standing delay's ratio to its target, at most
 * SHARE_RISE_MAX (offered load at twice the capacity is met within a second)...
 */
export const SHARE_RISE_GAIN = 0.04;
export const SHARE_RISE_MAX = 0.2;
/**
 * ... and down with the loop's headroom below its utilization threshold (a loop idle a tenth more: 0.05 less), by
 * SHARE_FALL_MIN at least: a loop busier per request with fewer requests a turn looks fuller than it is, so admission
 * keeps probing for room until a queue stands again.
 */
const SHARE_FALL_GAIN = 0.5;
export const SHARE_FALL_MIN = 0.005;
/** While the standing delay is at or above this share of its target, the share does not fall. */
export const RECOVER_BELOW = 0.5;
/** The hard part's steps: up with the overshoot of the worst hard threshold, at most a class a sample. */
const RISE_MIN = 0.05;
const RISE_GAIN = 0.25;
export const RISE_MAX = 1;

/**
 * The next state after a sample. The share of the offered traffic shed rises while a queue stands in the loop (its
 * standing delay past the target), faster the further past (at most SHARE_RISE_MAX a sample). It falls only while no
 * queue is forming (the standing delay below RECOVER_BELOW of the target), in proportion to the loop's headroom below
 * its utilization threshold (SHARE_FALL_MIN at least): fast when shedding left the loop idle, slowly near and above
 * the threshold. So admission settles with the loop busy about its threshold and no queue standing; utilization
 * alone never sheds (a loop busy all the time that answers in its turn is at capacity, not queueing). While a hard
 * threshold is passed everything below Enterprise is shed and the hard part climbs into Enterprise; it drops back at
 * once when none is, and the share then falls from 1. With load that is not the process's own, the share only falls.
 */
export function nextState(state: ShedState, pressure: Pressure): ShedState {
  const fall = Math.max(SHARE_FALL_MIN, SHARE_FALL_GAIN * pressure.headroom);
  if (!pressure.own) return { share: Math.max(0, state.share - fall), hard: 0 };
  if (pressure.queueing > 1) {
    const rise = Math.min(RISE_MAX, RISE_MIN + RISE_GAIN * (pressure.queueing - 1));
    return { share: 1, hard: Math.min(TOP_LEVEL - SOFT_CEILING, state.hard + rise) };
  }
  let { share } = state;
  if (pressure.ratio > 1) share = Math.min(1, share + Math.min(SHARE_RISE_MAX, SHARE_RISE_GAIN * pressure.ratio));
  else if (pressure.ratio < RECOVER_BELOW) share = Math.max(0, share - fall);
  return { share, hard: 0 };
}

/**
 * The shed level that sheds `share` of the offered traffic below Enterprise, lowest class first, given how that
 * traffic was spread over the half-class slots (`offered`, any scale): the smallest level whose shed share reaches
 * it. Classes with no traffic are skipped, so every step of the share changes what is shed (a level between classes
 * that carry nothing would shed nothing, and the controller would wind up crossing it). The whole share sheds every
 * class below Enterprise, seen lately or not. Without any traffic seen, the share maps onto the classes evenly.
 */
export function levelFor(share: number, offered: ArrayLike<number>): number {
  if (share <= 0) return 0;
  if (share >= 1) return SOFT_CEILING;
  let total = 0;
  for (let slot = 0; slot < SOFT_SLOTS; slot++) total += offered[slot] ?? 0;
  if (total <= 0) return SOFT_CEILING * Math.min(1, share);
  const shedAt = (level: number) => {
    let shed = 0;
    for (let slot = 0; slot < SOFT_SLOTS; slot++)
      shed += (offered[slot] ?? 0) * Math.min(1, Math.max(0, level - slot / 2));
    return shed / total;
  };
  // Linear between half classes: find the first half class that reaches the share, then interpolate.
  let below = 0;
  for (let half = 1; half <= SOFT_SLOTS; half++) {
    const level = half / 2;
    const at = shedAt(level);
    if (at >= share) return at === below ? level : level - 0.5 + (0.5 * (share - below)) / (at - below);
    below = at;
  }
  return SOFT_CEILING;
}

/** The level of a state: above SOFT_CEILING while the hard part is on, else the share's. */
export function levelOf(state: ShedState, offered: ArrayLike<number>): number {
  return state.hard > 0 ? SOFT_CEILING + state.hard : levelFor(state.share, offered);
}
