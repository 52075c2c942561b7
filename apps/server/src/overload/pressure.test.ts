import { describe, expect, it, vi } from 'vitest';
import { ownUtilization, SaturationMonitor } from './monitor.js';
import {
  nextLevel,
  pressureOf,
  RECOVER_BELOW,
  RISE_MAX,
  TOP_LEVEL,
  UTILIZATION_CEILING,
  type SaturationSignals,
} from './pressure.js';

const LIMITS = { eventLoopDelayMs: 40, eventLoopUtilization: 0.9, maxInFlight: 1000, maxDbWaiting: 50, minInFlight: 8 };
const calm: SaturationSignals = { eventLoopDelayMs: 1, eventLoopUtilization: 0.3, inFlight: 10, dbWaiting: 0 };

describe('pressureOf', () => {
  it('names the most saturated signal and its ratio to its threshold, and the highest queueing ratio', () => {
    expect(pressureOf(calm, LIMITS)).toEqual({
      signal: 'event_loop_utilization',
      ratio: 0.3 / 0.9,
      queueing: 1 / 40,
      own: true,
    });
    expect(pressureOf({ ...calm, eventLoopDelayMs: 120 }, LIMITS)).toEqual({
      signal: 'event_loop_delay',
      ratio: 3,
      queueing: 3,
      own: true,
    });
    expect(pressureOf({ ...calm, inFlight: 1500 }, LIMITS)).toEqual({
      signal: 'requests_in_flight',
      ratio: 1.5,
      queueing: 1.5,
      own: true,
    });
    expect(pressureOf({ ...calm, dbWaiting: 100 }, LIMITS)).toEqual({
      signal: 'db_pool_queue',
      ratio: 2,
      queueing: 2,
      own: true,
    });
    // Utilization is no queueing signal: a busy loop leaves `queueing` at the others' highest.
    expect(pressureOf({ ...calm, eventLoopUtilization: 0.99, eventLoopDelayMs: 20 }, LIMITS)).toEqual({
      signal: 'event_loop_utilization',
      ratio: 0.99 / 0.9,
      queueing: 0.5,
      own: true,
    });
  });

  it('leaves out in-flight requests and the pool queue when their threshold is 0', () => {
    const off = { ...LIMITS, maxInFlight: 0, maxDbWaiting: 0 };
    expect(pressureOf({ ...calm, inFlight: 1e6, dbWaiting: 1e6 }, off).signal).toBe('event_loop_utilization');
  });

  it('counts the load as the process’s own from minInFlight requests in flight or a busy loop (0: always)', () => {
    expect(pressureOf({ ...calm, eventLoopDelayMs: 120, inFlight: 7 }, LIMITS)).toMatchObject({ ratio: 3, own: false });
    expect(pressureOf({ ...calm, eventLoopDelayMs: 120, inFlight: 8 }, LIMITS).own).toBe(true);
    // A loop busy with requests it answers at once (synchronous SQLite) holds few in flight: still its own load.
    const busyLoop = { ...calm, eventLoopUtilization: 0.9 * RECOVER_BELOW, inFlight: 1 };
    expect(pressureOf(busyLoop, LIMITS).own).toBe(true);
    expect(pressureOf({ ...busyLoop, eventLoopUtilization: 0.9 * RECOVER_BELOW - 0.01 }, LIMITS).own).toBe(false);
    expect(pressureOf({ ...calm, inFlight: 0 }, { ...LIMITS, minInFlight: 0 }).own).toBe(true);
  });
});

/** A pressure whose most saturated signal is a queueing one (delay, in flight, pool). */
const queueing = (ratio: number) => ({ ratio, queueing: ratio, own: true });
/** A pressure from a busy loop whose queueing signals are at `queue`. */
const busy = (ratio: number, queue: number) => ({ ratio, queueing: queue, own: true });

describe('nextLevel', () => {
  it('rises while saturated, faster the further past the threshold, by at most a class a sample, up to the top', () => {
    expect(nextLevel(0, queueing(1.2))).toBeCloseTo(0.1);
    expect(nextLevel(0, queueing(4))).toBeCloseTo(0.8);
    expect(nextLevel(0, queueing(5))).toBe(RISE_MAX);
    expect(nextLevel(0, queueing(40))).toBe(RISE_MAX);
    expect(nextLevel(0, busy(1.1, 0))).toBeCloseTo(0.075);
    expect(nextLevel(TOP_LEVEL - 0.01, queueing(5))).toBe(TOP_LEVEL);
  });

  it('holds in the band below a queueing threshold and falls slowly only below it (hysteresis)', () => {
    expect(nextLevel(2, queueing(1))).toBe(2);
    expect(nextLevel(2, queueing(RECOVER_BELOW))).toBe(2);
    expect(nextLevel(2, busy(0.5, RECOVER_BELOW))).toBe(2);
    expect(nextLevel(2, queueing(RECOVER_BELOW - 0.01))).toBeCloseTo(1.95);
    expect(nextLevel(0.01, queueing(0))).toBe(0);
  });

  it('only falls with fewer than minInFlight requests in flight, however late the loop: not its own load', () => {
    expect(nextLevel(0, { ratio: 10, queueing: 10, own: false })).toBe(0);
    expect(nextLevel(2, { ratio: 10, queueing: 10, own: false })).toBeCloseTo(1.95);
  });

  it('never sheds Enterprise on utilization alone: only a queueing signal past its threshold goes higher', () => {
    let level = 0;
    for (let i = 0; i < 100; i++) level = nextLevel(level, busy(1 / 0.9, 0.5));
    expect(level).toBe(UTILIZATION_CEILING);
    expect(nextLevel(level, busy(1.11, 1.2))).toBeGreaterThan(UTILIZATION_CEILING);
    // A late loop took it higher; once the lateness is gone, a busy loop alone brings it back to the ceiling at once.
    expect(nextLevel(TOP_LEVEL, busy(1.11, 0.9))).toBe(UTILIZATION_CEILING);
    expect(nextLevel(TOP_LEVEL, busy(0.5, 0.9))).toBe(UTILIZATION_CEILING);
  });

  it('falls while the loop is busy under its threshold and nothing queues: utilization holds nothing', () => {
    expect(nextLevel(2, busy(1, 0.1))).toBeCloseTo(1.95);
    expect(nextLevel(2, busy(0.95, 0.5))).toBeCloseTo(1.95);
  });
});

describe('SaturationMonitor', () => {
  it('counts as utilization only the CPU the process used: time a neighbour ran is not its load', () => {
    expect(ownUtilization(0.97, 0.6)).toBe(0.6);
    expect(ownUtilization(0.5, 0.8)).toBe(0.5);
  });

  it('tells when shedding starts and stops, once each, and reports every sample', () => {
    const onShedding = vi.fn();
    const onSample = vi.fn();
    const monitor = new SaturationMonitor({ thresholds: LIMITS, inFlight: () => 0, onShedding, onSample });
    monitor.sample({ ...calm, eventLoopDelayMs: 120, inFlight: 7 }); // not its own load: no shedding
    expect(monitor.level).toBe(0);
    monitor.sample({ ...calm, eventLoopDelayMs: 120 });
    monitor.sample({ ...calm, eventLoopDelayMs: 120 });
    expect(monitor.level).toBeCloseTo(2 * (0.05 + 0.25 * 2));
    const calls = onShedding.mock.calls as [boolean, { signal: string }][];
    expect(calls.map(([on, pressure]) => [on, pressure.signal])).toEqual([[true, 'event_loop_delay']]);
    for (let i = 0; i < 100 && monitor.level > 0; i++) monitor.sample(calm);
    expect(monitor.level).toBe(0);
    expect(onShedding).toHaveBeenCalledTimes(2);
    expect(onShedding.mock.calls[1]![0]).toBe(false);
    expect(onSample).toHaveBeenCalledTimes(3 + 22);
  });

  it('samples on a timer of its own that does not keep the process alive', async () => {
    const onSample = vi.fn();
    const monitor = new SaturationMonitor({ thresholds: LIMITS, inFlight: () => 7, sampleMs: 5, onSample });
    monitor.start();
    await vi.waitFor(() => expect(onSample.mock.calls.length).toBeGreaterThanOrEqual(3));
    monitor.stop();
    const [signals] = onSample.mock.calls[0]! as [SaturationSignals];
    expect(signals.inFlight).toBe(7);
    expect(signals.eventLoopUtilization).toBeGreaterThanOrEqual(0);
    expect(signals.eventLoopUtilization).toBeLessThanOrEqual(1);
    expect(signals.eventLoopDelayMs).toBeGreaterThanOrEqual(0);
  });
});
