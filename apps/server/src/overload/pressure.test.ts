import { describe, expect, it, vi } from 'vitest';
import { SaturationMonitor } from './monitor.js';
import { nextLevel, pressureOf, RECOVER_BELOW, TOP_LEVEL, type SaturationSignals } from './pressure.js';

const LIMITS = { eventLoopDelayMs: 40, eventLoopUtilization: 0.9, maxInFlight: 1000, maxDbWaiting: 50 };
const calm: SaturationSignals = { eventLoopDelayMs: 1, eventLoopUtilization: 0.3, inFlight: 10, dbWaiting: 0 };

describe('pressureOf', () => {
  it('names the most saturated signal and its ratio to its threshold', () => {
    expect(pressureOf(calm, LIMITS)).toEqual({ signal: 'event_loop_utilization', ratio: 0.3 / 0.9 });
    expect(pressureOf({ ...calm, eventLoopDelayMs: 120 }, LIMITS)).toEqual({ signal: 'event_loop_delay', ratio: 3 });
    expect(pressureOf({ ...calm, inFlight: 1500 }, LIMITS)).toEqual({ signal: 'requests_in_flight', ratio: 1.5 });
    expect(pressureOf({ ...calm, dbWaiting: 100 }, LIMITS)).toEqual({ signal: 'db_pool_queue', ratio: 2 });
  });

  it('leaves out in-flight requests and the pool queue when their threshold is 0', () => {
    const off = { ...LIMITS, maxInFlight: 0, maxDbWaiting: 0 };
    expect(pressureOf({ ...calm, inFlight: 1e6, dbWaiting: 1e6 }, off).signal).toBe('event_loop_utilization');
  });
});

describe('nextLevel', () => {
  it('rises while saturated, faster the further past the threshold, up to the top', () => {
    expect(nextLevel(0, 1.2)).toBeCloseTo(0.1);
    expect(nextLevel(0, 5)).toBeCloseTo(1.05);
    expect(nextLevel(TOP_LEVEL - 0.01, 5)).toBe(TOP_LEVEL);
  });

  it('holds in the band below the threshold and falls slowly only below it (hysteresis)', () => {
    expect(nextLevel(2, 1)).toBe(2);
    expect(nextLevel(2, RECOVER_BELOW)).toBe(2);
    expect(nextLevel(2, RECOVER_BELOW - 0.01)).toBeCloseTo(1.95);
    expect(nextLevel(0.01, 0)).toBe(0);
  });
});

describe('SaturationMonitor', () => {
  it('tells when shedding starts and stops, once each, and reports every sample', () => {
    const onShedding = vi.fn();
    const onSample = vi.fn();
    const monitor = new SaturationMonitor({ thresholds: LIMITS, inFlight: () => 0, onShedding, onSample });
    monitor.sample({ ...calm, eventLoopDelayMs: 200 });
    monitor.sample({ ...calm, eventLoopDelayMs: 200 });
    expect(monitor.level).toBeCloseTo(2 * (0.05 + 0.25 * 4));
    const calls = onShedding.mock.calls as [boolean, { signal: string }][];
    expect(calls.map(([on, pressure]) => [on, pressure.signal])).toEqual([[true, 'event_loop_delay']]);
    for (let i = 0; i < 100 && monitor.level > 0; i++) monitor.sample(calm);
    expect(monitor.level).toBe(0);
    expect(onShedding).toHaveBeenCalledTimes(2);
    expect(onShedding.mock.calls[1]![0]).toBe(false);
    expect(onSample).toHaveBeenCalledTimes(2 + 42);
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
