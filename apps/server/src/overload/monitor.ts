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
      const utilization = performance.eventLoopUtilization(elu, this.#elu).utilization;
      this.#elu = elu;
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
