/**
 * How saturated the process is, from its own signals, and the shed level that follows: the controller of load
 * shedding (admission.ts applies the level to each request).
 */

/** The process's own signals, sampled by monitor.ts. */
export interface SaturationSignals {
  /** How late the sampler's timer fired (ms): how long a request that arrives now waits for the event loop. */
  readonly eventLoopDelayMs: number;
  /** Share of the last sample period the event loop was busy (0..1). */
  readonly eventLoopUtilization: number;
  /** Requests admitted and not yet finished. */
  readonly inFlight: number;
  /** Queries waiting for a database pool connection (PostgreSQL; 0 on SQLite). */
  readonly dbWaiting: number;
}

/** Where each signal means "saturated" (config's LOAD_SHED_*); 0 leaves in-flight or the pool queue out. */
export interface SaturationThresholds {
  readonly eventLoopDelayMs: number;
  readonly eventLoopUtilization: number;
  readonly maxInFlight: number;
  readonly maxDbWaiting: number;
  /**
   * Fewer requests in flight than this, and a loop that is not busy either (utilization below RECOVER_BELOW of its
   * threshold): the process has no load of its own to shed, so a late timer comes from elsewhere (a neighbour's CPU,
   * a throttled quota) and shedding would refuse requests without making any answer sooner. Then the level only
   * falls. A loop kept busy by requests it answers at once (SQLite's synchronous reads hold few in flight) is its own
   * load. 0: every sample counts.
   */
  readonly minInFlight: number;
}

/** The signal names, as the metrics' `reason` label. */
export const SIGNALS = ['event_loop_delay', 'event_loop_utilization', 'requests_in_flight', 'db_pool_queue'] as const;
export type SignalName = (typeof SIGNALS)[number];

/** The most saturated signal and its ratio to its threshold (above 1: saturated). */
export interface Pressure {
  readonly ratio: number;
  readonly signal: SignalName;
  /** The highest ratio of the queueing signals (event-loop delay, in flight, pool queue): all but utilization. */
  readonly queueing: number;
  /** False with few requests in flight and an idle loop (`minInFlight`): the load is not the process's own. */
  readonly own: boolean;
}

export function pressureOf(signals: SaturationSignals, limits: SaturationThresholds): Pressure {
  const ratios: [SignalName, number][] = [
    ['event_loop_delay', signals.eventLoopDelayMs / limits.eventLoopDelayMs],
    ['event_loop_utilization', signals.eventLoopUtilization / limits.eventLoopUtilization],
    ['requests_in_flight', limits.maxInFlight > 0 ? signals.inFlight / limits.maxInFlight : 0],
    ['db_pool_queue', limits.maxDbWaiting > 0 ? signals.dbWaiting / limits.maxDbWaiting : 0],
  ];
  let worst = ratios[0]!;
  for (const entry of ratios) if (entry[1] > worst[1]) worst = entry;
  const queueing = Math.max(...ratios.filter(([name]) => name !== 'event_loop_utilization').map(([, r]) => r));
  const own =
    signals.inFlight >= limits.minInFlight ||
    signals.eventLoopUtilization >= limits.eventLoopUtilization * RECOVER_BELOW;
  return { signal: worst[0], ratio: worst[1], queueing, own };
}

/**
 * Priority classes, lowest shed first: requests without a valid key, then each plan in order; a create sits half a
 * class above a read of its plan (admission.ts). The shed level runs from 0 (admit everything) to TOP_LEVEL (shed
 * everything that may be shed); a request of class c is shed with probability clamp(level - c, 0, 1).
 */
export const TOP_LEVEL = 5.5;

/**
 * The highest level utilization alone reaches: every plan below Enterprise (class 4) shed, Enterprise never. A busy
 * loop that answers in its turn is not late yet; only a queueing signal past its threshold (the loop late, too many
 * in flight, the pool's queue) says Enterprise's answers would be late too, and lets the level go higher.
 */
export const UTILIZATION_CEILING = 4;

/** The controller's steps, per sample: rise with the overshoot, by at most a class, and fall slowly. */
const RISE_MIN = 0.05;
const RISE_GAIN = 0.25;
export const RISE_MAX = 1;
const FALL = 0.05;
/** Below this share of every threshold the level falls; between it and 1 it holds (the hysteresis band). */
export const RECOVER_BELOW = 0.8;

/**
 * The next shed level after a sample: it rises while any signal is past its threshold, faster the further past but by
 * at most a class a sample (RISE_MAX), so one late timer (a collector's pause, a neighbour's burst of CPU) sheds one
 * class more for a while, not everything for seconds. It holds while a queueing signal is in the band below its
 * threshold, and falls slowly once every queueing signal is well below (RECOVER_BELOW): one good sample does not
 * reopen the gates. Utilization holds nothing: a loop busy just under its threshold and not queueing is the operating
 * point admission aims for, so below its threshold the level falls back to it; a band there would let each passing
 * spike ratchet the level up while the process sheds far more than it must. Utilization alone never takes the level past
 * UTILIZATION_CEILING: Enterprise is shed only while a queueing signal is past its threshold.
 */
export function nextLevel(level: number, pressure: Pick<Pressure, 'ratio' | 'queueing' | 'own'>): number {
  if (!pressure.own) return Math.max(0, level - FALL);
  const ceiling = pressure.queueing > 1 ? TOP_LEVEL : UTILIZATION_CEILING;
  if (pressure.ratio > 1)
    return Math.min(ceiling, level + Math.min(RISE_MAX, RISE_MIN + RISE_GAIN * (pressure.ratio - 1)));
  if (pressure.queueing < RECOVER_BELOW) return Math.min(ceiling, Math.max(0, level - FALL));
  return Math.min(ceiling, level);
}
