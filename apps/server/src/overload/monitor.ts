import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { nextLevel, pressureOf, type Pressure, type SaturationSignals, type SaturationThresholds } from './pressure.js';

export interface MonitorOptions {
  readonly thresholds: SaturationThresholds;
  /** Requests admitted and not yet finished (admission.ts counts them). */
  readonly inFlight: () => number;
  /** Queries waiting for a database pool connection, when the database has a pool. */
  readonly dbWaiting?: (() => number) | undefined;
  /** How often the signals are sampled (ms). Default 100. */
  readonly sampleMs?: number;
  /** Told after every sample (gauges). */
  readonly onSample?: (signals: SaturationSignals, pressure: Pressure, level: number) => void;
  /** Told when shedding starts (the level leaves 0) and when it stops (back to 0). */
  readonly onShedding?: (shedding: boolean, pressure: Pressure, signals: SaturationSignals) => void;
}

/**
 * Samples the process's saturation on a timer of its own and keeps the shed level (pressure.ts). The event-loop delay
 * is the timer's own lateness: a request arriving now waits about as long for its turn. The timer is unref'd: it never
 * keeps the process alive.
 */
export class SaturationMonitor {
  #level = 0;
  #pressure: Pressure = { ratio: 0, signal: 'event_loop_delay', queueing: 0, own: false };
  #timer: NodeJS.Timeout | undefined;
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

  start(): void {
    if (this.#timer !== undefined) return;
    this.#elu = performance.eventLoopUtilization();
    this.#cpu = { usage: process.cpuUsage(), at: performance.now() };
    this.#arm();
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** One controller step with these signals (the timer's, or a test's). */
  sample(signals: SaturationSignals): void {
    const before = this.#level;
    this.#pressure = pressureOf(signals, this.options.thresholds);
    this.#level = nextLevel(before, this.#pressure);
    this.options.onSample?.(signals, this.#pressure, this.#level);
    if ((before === 0) !== (this.#level === 0)) this.options.onShedding?.(this.#level > 0, this.#pressure, signals);
  }

  #arm(): void {
    const due = performance.now() + this.#sampleMs;
    this.#timer = setTimeout(() => {
      const elu = performance.eventLoopUtilization();
      const cpu = { usage: process.cpuUsage(), at: performance.now() };
      const utilization = ownUtilization(
        performance.eventLoopUtilization(elu, this.#elu).utilization,
        cpuShare(cpu, this.#cpu!),
      );
      [this.#elu, this.#cpu] = [elu, cpu];
      this.sample({
        eventLoopDelayMs: Math.max(0, performance.now() - due),
        eventLoopUtilization: utilization,
        inFlight: this.options.inFlight(),
        dbWaiting: this.options.dbWaiting?.() ?? 0,
      });
      this.#arm();
    }, this.#sampleMs);
    this.#timer.unref();
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
