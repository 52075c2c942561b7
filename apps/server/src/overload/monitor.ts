import { monitorEventLoopDelay, performance, type EventLoopUtilization, type IntervalHistogram } from 'node:perf_hooks';
import {
  levelOf,
  nextState,
  pressureOf,
  waitOver,
  type Pressure,
  type SaturationSignals,
  type SaturationThresholds,
  type ShedState,
  type Standing,
} from './pressure.js';
import { CLASS_SLOTS } from './priorities.js';

export interface MonitorOptions {
  readonly thresholds: SaturationThresholds;
  /** Requests admitted and not yet finished (admission.ts counts them). */
  readonly inFlight: () => number;
  /** Queries waiting for a database pool connection, when the database has a pool. */
  readonly dbWaiting?: (() => number) | undefined;
  /** The median time in the process (ms) of the requests answered since the last call; undefined if none was. */
  readonly timeInProcess?: () => number | undefined;
  /** Requests offered per half-class slot since the last call (admission.ts): how the traffic is spread. */
  readonly offered?: () => ArrayLike<number>;
  /** How often the signals are sampled (ms). Default 100. */
  readonly sampleMs?: number;
  /** Told after every sample (gauges). */
  readonly onSample?: (signals: SaturationSignals, pressure: Pressure, level: number) => void;
  /** Told when shedding starts (the level leaves 0) and when it stops (back to 0). */
  readonly onShedding?: (shedding: boolean, pressure: Pressure, signals: SaturationSignals) => void;
}

/** The event-loop delay histogram's timer (ms): a turn longer than this is seen as lateness. */
const DELAY_RESOLUTION_MS = 2;
/**
 * Below this share of a sample busy (the loop's own measure, wall clock), the delay histogram's timer rests. A loop
 * idle that much has no standing queue for it to see: the timer runs on time through every idle stretch (a firing
 * every DELAY_RESOLUTION_MS) and is late at most once a turn, so most firings are on time and the median lateness is
 * below the resolution; running, the timer would only wake an idle process 1,000 / DELAY_RESOLUTION_MS times a second.
 */
const RESTING_UTILIZATION = 0.5;
/** Samples a delay must last through to be a standing queue (CoDel's interval: 300 ms). */
const STANDING_SAMPLES = 3;
/** Weight of the last sample in the spread of the offered traffic over the classes (about a second's memory). */
const SPREAD_WEIGHT = 0.2;

/**
 * Samples the process's saturation on a timer of its own and keeps the shed level (pressure.ts). The event-loop delay
 * is the median lateness of a timer every DELAY_RESOLUTION_MS over the sample (perf_hooks' monitorEventLoopDelay): a
 * loop that spends each turn on a batch of waiting requests is late by that batch, and a request arriving then waits
 * about as long for its turn. The requests' wait is their median time in the process over its baseline (waitOver),
 * which grows when requests queue for the database while the loop idles. The delay's timer rests while the loop is
 * mostly idle (RESTING_UTILIZATION). The timers never keep the process alive.
 */
export class SaturationMonitor {
  #level = 0;
  #utilization = 0;
  #state: ShedState = { share: 0, hard: 0 };
  /** How the offered traffic is spread over the half-class slots (a moving average of shares). */
  readonly #spread = new Float64Array(CLASS_SLOTS);
  #pressure: Pressure = { ratio: 0, signal: 'event_loop_delay', queueing: 0, headroom: 0, own: false };
  /** The last samples' loop delays and requests' waits, newest last. */
  readonly #seen: Standing[] = [];
  /** The lowest median time in process seen, drifting up slowly (waitOver). */
  #baselineMs = Infinity;
  #timer: NodeJS.Timeout | undefined;
  #delays: IntervalHistogram | undefined;
  /** The histogram's timer stopped while the loop is mostly idle (RESTING_UTILIZATION). */
  #resting = false;
  #elu: EventLoopUtilization | undefined;
  #cpu: { usage: NodeJS.CpuUsage; at: number } | undefined;
  readonly #sampleMs: number;

  constructor(private readonly options: MonitorOptions) {
    this.#sampleMs = options.sampleMs ?? 100;
  }

  /** The shed level now (0: admit everything). */
  get level(): number {
    return this.#level;
  }

  /** The most saturated signal at the last sample. */
  get pressure(): Pressure {
    return this.#pressure;
  }

  /** The share of the last sample the event loop was busy, counting only the CPU the process used (0..1). */
  get utilization(): number {
    return this.#utilization;
  }

  /** Whether the event-loop delay histogram's timer runs (it rests while the loop is mostly idle and nothing is shed). */
  get watchingDelay(): boolean {
    return this.#delays !== undefined && !this.#resting;
  }

  /** The share of the offered traffic below Enterprise the controller sheds (0..1). */
  get share(): number {
    return this.#state.share;
  }

  start(): void {
    if (this.#timer !== undefined) return;
    this.#delays = monitorEventLoopDelay({ resolution: DELAY_RESOLUTION_MS });
    this.#delays.enable();
    this.#resting = false;
    this.#elu = performance.eventLoopUtilization();
    this.#cpu = { usage: process.cpuUsage(), at: performance.now() };
    this.#arm();
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#delays?.disable();
    this.#delays = undefined;
  }

  /** One controller step with these signals (the timer's, or a test's). */
  sample(signals: SaturationSignals): void {
    const before = this.#level;
    this.#utilization = signals.eventLoopUtilization;
    this.#spreadOffered();
    this.#seen.push({ delayMs: signals.eventLoopDelayMs, waitMs: signals.requestWaitMs ?? 0 });
    if (this.#seen.length > STANDING_SAMPLES) this.#seen.shift();
    const standing = {
      delayMs: Math.min(...this.#seen.map((s) => s.delayMs)),
      waitMs: Math.min(...this.#seen.map((s) => s.waitMs)),
    };
    this.#pressure = pressureOf(signals, this.options.thresholds, standing);
    this.#state = nextState(this.#state, this.#pressure);
    this.#level = levelOf(this.#state, this.#spread);
    this.options.onSample?.(signals, this.#pressure, this.#level);
    if ((before === 0) !== (this.#level === 0)) this.options.onShedding?.(this.#level > 0, this.#pressure, signals);
  }

  #arm(): void {
    const due = performance.now() + this.#sampleMs;
    this.#timer = setTimeout(() => {
      const elu = performance.eventLoopUtilization();
      const cpu = { usage: process.cpuUsage(), at: performance.now() };
      const busy = performance.eventLoopUtilization(elu, this.#elu).utilization;
      const utilization = ownUtilization(busy, cpuShare(cpu, this.#cpu!));
      [this.#elu, this.#cpu] = [elu, cpu];
      this.sample({
        eventLoopDelayMs: this.#delay(Math.max(0, performance.now() - due), busy),
        eventLoopUtilization: utilization,
        inFlight: this.options.inFlight(),
        dbWaiting: this.options.dbWaiting?.() ?? 0,
        requestWaitMs: this.#requestWait(),
      });
      this.#arm();
    }, this.#sampleMs);
    this.#timer.unref();
  }

  /**
   * The histogram's median lateness since the last sample, or this timer's own when the loop never turned meanwhile.
   * The median, as CoDel takes the minimum of an interval: a queue that stands makes most turns late, while one long
   * pause (a collection, a neighbour's burst of CPU) makes one turn late and leaves the median where it was. Then the
   * histogram rests or runs for the next sample by this one's `busy` share: resting, the delay is 0 below
   * RESTING_UTILIZATION (what the histogram would have read) and this timer's own lateness above it, for the one
   * sample until the histogram runs again. It never rests while the level sheds.
   */
  #delay(own: number, busy: number): number {
    const delays = this.#delays!;
    let median: number;
    if (this.#resting) median = busy < RESTING_UTILIZATION ? 0 : own;
    else {
      median = delays.count > 0 ? Math.max(0, delays.percentile(50) / 1e6 - DELAY_RESOLUTION_MS) : own;
      delays.reset();
    }
    const rest = busy < RESTING_UTILIZATION && this.#level === 0;
    if (rest !== this.#resting) {
      if (rest) delays.disable();
      else delays.enable();
      this.#resting = rest;
    }
    return median;
  }

  /** The requests' median time in process since the last sample less the baseline, which it updates. */
  #requestWait(): number {
    const median = this.options.timeInProcess?.();
    if (median === undefined) return 0;
    const { baselineMs, waitMs } = waitOver(this.#baselineMs, median);
    this.#baselineMs = baselineMs;
    return waitMs;
  }

  /** Folds the requests offered since the last sample into the spread (kept as it was when none came). */
  #spreadOffered(): void {
    const offered = this.options.offered?.();
    if (offered === undefined) return;
    let total = 0;
    for (let slot = 0; slot < this.#spread.length; slot++) total += offered[slot] ?? 0;
    if (total === 0) return;
    for (let slot = 0; slot < this.#spread.length; slot++)
      this.#spread[slot] = (1 - SPREAD_WEIGHT) * this.#spread[slot]! + (SPREAD_WEIGHT * (offered[slot] ?? 0)) / total;
  }
}

/** Share of one CPU the process used between two readings (user and system time over wall time). */
function cpuShare(now: { usage: NodeJS.CpuUsage; at: number }, before: { usage: NodeJS.CpuUsage; at: number }) {
  const used = now.usage.user - before.usage.user + now.usage.system - before.usage.system;
  return now.at > before.at ? used / 1000 / (now.at - before.at) : 0;
}

/**
 * The utilization signal: the event loop's, but no more than the CPU the process really used. A loop is "busy" for
 * event-loop utilization from the moment it has work until it waits for I/O again, including the time the operating
 * system runs something else on its CPU (a neighbour's work, a throttled quota): that time is not the process's own
 * load, and shedding cannot win it back, since a shed answer costs CPU too. Taking the lower of the two counts only
 * the work the process itself did.
 */
export function ownUtilization(eventLoopUtilization: number, cpuShare: number): number {
  return Math.min(eventLoopUtilization, cpuShare);
}
