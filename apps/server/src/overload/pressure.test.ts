import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { ownUtilization, SaturationMonitor } from './monitor.js';
import {
  levelFor,
  levelOf,
  nextState,
  OWN_LOAD,
  pressureOf,
  RECOVER_BELOW,
  RISE_MAX,
  SHARE_FALL_MIN,
  SHARE_RISE_MAX,
  SOFT_CEILING,
  TOP_LEVEL,
  WAIT_TARGETS,
  waitOver,
  type Pressure,
  type SaturationSignals,
} from './pressure.js';

const LIMITS = {
  targetDelayMs: 5,
  eventLoopDelayMs: 40,
  eventLoopUtilization: 0.9,
  maxInFlight: 1000,
  maxDbWaiting: 50,
  minInFlight: 8,
};
const calm: SaturationSignals = { eventLoopDelayMs: 1, eventLoopUtilization: 0.45, inFlight: 10, dbWaiting: 0 };

describe('pressureOf', () => {
  it('rates the standing delay against its target, the hard thresholds, and the headroom below the utilization one', () => {
    expect(pressureOf(calm, LIMITS)).toEqual({
      ratio: 1 / 5,
      signal: 'event_loop_delay',
      queueing: 1 / 40,
      headroom: 0.5,
      own: true,
    });
    // The standing delay (the lowest of the last samples) decides, not one late sample.
    expect(pressureOf({ ...calm, eventLoopDelayMs: 30 }, LIMITS, { delayMs: 10, waitMs: 10 })).toMatchObject({
      ratio: 2,
      queueing: 0.25,
    });
    // Requests waiting in the process (for the database) while the loop idles: shed below Enterprise, never above.
    expect(pressureOf({ ...calm, requestWaitMs: 100 }, LIMITS)).toMatchObject({
      ratio: 100 / (WAIT_TARGETS * 5),
      signal: 'request_wait',
      queueing: 1 / 40,
    });
    // Past capacity the wait plateaus where every client connection holds a request: 25 ms over the baseline (200
    // connections on a database answering 8,000 a second) is past the target, however far the offered load is.
    expect(pressureOf({ ...calm, requestWaitMs: 25 }, LIMITS, { delayMs: 1, waitMs: 25 }).ratio).toBeGreaterThan(1);
    expect(pressureOf({ ...calm, eventLoopDelayMs: 120 }, LIMITS)).toMatchObject({
      signal: 'event_loop_delay',
      ratio: 24,
      queueing: 3,
    });
    expect(pressureOf({ ...calm, inFlight: 1500 }, LIMITS)).toMatchObject({
      signal: 'requests_in_flight',
      queueing: 1.5,
    });
    expect(pressureOf({ ...calm, dbWaiting: 100 }, LIMITS)).toMatchObject({ signal: 'db_pool_queue', queueing: 2 });
    // A loop busy past its utilization threshold has no headroom, and that alone is no reason to shed.
    expect(pressureOf({ ...calm, eventLoopUtilization: 1 }, LIMITS)).toMatchObject({ ratio: 0.2, headroom: 0 });
  });

  it('leaves out in-flight requests and the pool queue when their threshold is 0', () => {
    const off = { ...LIMITS, maxInFlight: 0, maxDbWaiting: 0 };
    expect(pressureOf({ ...calm, inFlight: 1e6, dbWaiting: 1e6 }, off).queueing).toBe(1 / 40);
  });

  it('counts the load as the process’s own from minInFlight requests in flight or a busy loop (0: always)', () => {
    expect(pressureOf({ ...calm, eventLoopDelayMs: 120, inFlight: 7 }, LIMITS).own).toBe(false);
    expect(pressureOf({ ...calm, eventLoopDelayMs: 120, inFlight: 8 }, LIMITS).own).toBe(true);
    // A loop busy with requests it answers at once (synchronous SQLite) holds few in flight: still its own load.
    const busyLoop = { ...calm, eventLoopUtilization: OWN_LOAD, inFlight: 1 };
    expect(pressureOf(busyLoop, LIMITS).own).toBe(true);
    expect(pressureOf({ ...busyLoop, eventLoopUtilization: OWN_LOAD - 0.01 }, LIMITS).own).toBe(false);
    expect(pressureOf({ ...calm, inFlight: 0 }, { ...LIMITS, minInFlight: 0 }).own).toBe(true);
  });
});

/** A pressure: the standing delay's ratio to its target, the loop's headroom, the worst hard ratio. */
const p = (ratio: number, headroom = 0, queueing = 0, own = true): Pressure => ({
  ratio,
  headroom,
  queueing,
  own,
  signal: 'event_loop_delay',
});

describe('nextState', () => {
  it('sheds more while a queue stands, the more the further past its target, by at most SHARE_RISE_MAX a sample', () => {
    const start = { share: 0.3, hard: 0 };
    const small = nextState(start, p(1.5)).share;
    const large = nextState(start, p(4)).share;
    expect(small).toBeGreaterThan(0.3);
    expect(large).toBeGreaterThan(small);
    expect(nextState(start, p(100)).share).toBeCloseTo(0.3 + SHARE_RISE_MAX);
    expect(nextState({ share: 0.95, hard: 0 }, p(100)).share).toBe(1);
  });

  it('utilization alone never sheds: a loop busy all the time with no queue standing holds its share', () => {
    expect(nextState({ share: 0, hard: 0 }, p(0.9, 0))).toEqual({ share: 0, hard: 0 });
    expect(nextState({ share: 0.4, hard: 0 }, p(0.9, 0))).toEqual({ share: 0.4, hard: 0 });
  });

  it('lets more in only while no queue forms, with the loop’s headroom, and SHARE_FALL_MIN at least', () => {
    // In the band below the target: hold, however idle the loop.
    expect(nextState({ share: 0.4, hard: 0 }, p(RECOVER_BELOW, 0.5)).share).toBe(0.4);
    const idle = nextState({ share: 0.4, hard: 0 }, p(0.1, 0.5)).share;
    const nearlyBusy = nextState({ share: 0.4, hard: 0 }, p(0.1, 0.05)).share;
    expect(idle).toBeLessThan(nearlyBusy);
    expect(nearlyBusy).toBeLessThan(0.4);
    expect(nextState({ share: 0.4, hard: 0 }, p(0.1, 0)).share).toBeCloseTo(0.4 - SHARE_FALL_MIN);
    expect(nextState({ share: 0.001, hard: 0 }, p(0, 1)).share).toBe(0);
  });

  it('sheds everything below Enterprise and climbs into it while a hard threshold is passed, and drops back at once', () => {
    let state = { share: 0.2, hard: 0 };
    state = nextState(state, p(30, 0, 1.2));
    expect(state.share).toBe(1);
    expect(state.hard).toBeGreaterThan(0);
    expect(state.hard).toBeLessThanOrEqual(RISE_MAX);
    for (let i = 0; i < 20; i++) state = nextState(state, p(30, 0, 5));
    expect(state.hard).toBe(TOP_LEVEL - SOFT_CEILING);
    state = nextState(state, p(0.1, 0.5, 0.9));
    expect(state.hard).toBe(0);
    expect(state.share).toBeLessThan(1);
    expect(state.share).toBeGreaterThan(0.5);
  });

  it('only lets more in when the load is not the process’s own, however late the loop', () => {
    expect(nextState({ share: 0.5, hard: 1 }, p(10, 0, 10, false))).toEqual({ share: 0.5 - SHARE_FALL_MIN, hard: 0 });
    expect(nextState({ share: 0, hard: 0 }, p(10, 0, 10, false))).toEqual({ share: 0, hard: 0 });
  });
});

describe('waitOver', () => {
  it('measures a wait above the lowest time in process seen, which drifts up only slowly', () => {
    let baselineMs = Infinity;
    const waits = [3, 2, 3, 30].map((medianMs) => {
      const next = waitOver(baselineMs, medianMs);
      baselineMs = next.baselineMs;
      return next.waitMs;
    });
    expect(waits[0]).toBe(0);
    expect(waits[1]).toBe(0);
    expect(waits[2]).toBeCloseTo(1, 2);
    expect(waits[3]).toBeCloseTo(28, 1);
    expect(baselineMs).toBeGreaterThan(2);
    expect(baselineMs).toBeLessThan(2.1);
  });
});

describe('levelFor', () => {
  /** Offered requests per half-class slot: 0 none, 2 free reads, 3 free creates, ..., 8 enterprise reads. */
  const spread = (counts: Record<number, number>) => Float64Array.from({ length: 12 }, (_, i) => counts[i] ?? 0);

  it('sheds the share of the traffic below Enterprise from the lowest class up, skipping classes nobody sends', () => {
    // Only Free reads (class 1) and Enterprise reads: the level moves through Free's class alone.
    const freeOnly = spread({ 2: 95, 8: 5 });
    expect(levelFor(0, freeOnly)).toBe(0);
    expect(levelFor(0.01, freeOnly)).toBeCloseTo(1.01);
    expect(levelFor(0.75, freeOnly)).toBeCloseTo(1.75);
    expect(levelFor(0.999, freeOnly)).toBeCloseTo(1.999);
    expect(levelFor(1, freeOnly)).toBe(SOFT_CEILING); // the whole share: every class below Enterprise
    // Keyless requests, then Free, then Pro reads: each level sheds the share asked, lowest first.
    const mixed = spread({ 0: 10, 2: 60, 4: 30 });
    expect(levelFor(0.05, mixed)).toBeCloseTo(0.5);
    expect(levelFor(0.1, mixed)).toBeCloseTo(1);
    expect(levelFor(0.4, mixed)).toBeCloseTo(1.5);
    expect(levelFor(0.85, mixed)).toBeCloseTo(2.5);
  });

  it('never goes past SOFT_CEILING: Enterprise is shed only by the hard part', () => {
    expect(levelFor(1, spread({ 7: 10, 8: 90 }))).toBe(SOFT_CEILING);
    expect(levelFor(1, spread({ 8: 100 }))).toBe(SOFT_CEILING);
    expect(levelOf({ share: 1, hard: 0.7 }, spread({ 2: 1 }))).toBeCloseTo(SOFT_CEILING + 0.7);
  });

  it('maps the share evenly onto the classes before any traffic was seen', () => {
    expect(levelFor(0.5, spread({}))).toBe(SOFT_CEILING / 2);
  });
});

describe('SaturationMonitor', () => {
  it('counts as utilization only the CPU the process used: time a neighbour ran is not its load', () => {
    expect(ownUtilization(0.97, 0.6)).toBe(0.6);
    expect(ownUtilization(0.5, 0.8)).toBe(0.5);
  });

  it('sheds once a delay has stood through three samples, onto the classes sent, and tells when it starts and stops', () => {
    const onShedding = vi.fn();
    const onSample = vi.fn();
    // Free reads only (half-class slot 2): the share shed is a share of Free's reads.
    const offered = () => Float64Array.from({ length: 12 }, (_, i) => (i === 2 ? 100 : 0));
    const monitor = new SaturationMonitor({ thresholds: LIMITS, inFlight: () => 0, offered, onShedding, onSample });
    const late = { ...calm, eventLoopDelayMs: 20 }; // four times the target, half the hard threshold
    monitor.sample(calm);
    monitor.sample(late);
    monitor.sample(late);
    expect(monitor.level).toBe(0); // a queue that passes within 300 ms is no standing queue
    monitor.sample(late);
    expect(monitor.share).toBeGreaterThan(0);
    expect(monitor.level).toBeCloseTo(1 + monitor.share);
    const calls = onShedding.mock.calls as [boolean, { signal: string }][];
    expect(calls.map(([on, pressure]) => [on, pressure.signal])).toEqual([[true, 'event_loop_delay']]);
    for (let i = 0; i < 100 && monitor.level > 0; i++) monitor.sample(calm);
    expect(monitor.level).toBe(0);
    expect(onShedding).toHaveBeenCalledTimes(2);
    expect(onShedding.mock.calls[1]![0]).toBe(false);
    expect(onSample.mock.calls.length).toBeGreaterThan(4);
  });

  it('sheds Enterprise only while a delay past the hard threshold stands, and not for load that is not its own', () => {
    const offered = () => Float64Array.from({ length: 12 }, (_, i) => (i === 2 || i === 8 ? 50 : 0));
    const monitor = new SaturationMonitor({ thresholds: LIMITS, inFlight: () => 0, offered });
    const stalled = { ...calm, eventLoopDelayMs: 100, eventLoopUtilization: 1 };
    for (let i = 0; i < 3; i++) monitor.sample({ ...stalled, eventLoopUtilization: 0.1, inFlight: 1 });
    expect(monitor.level).toBe(0);
    for (let i = 0; i < 3; i++) monitor.sample(stalled);
    expect(monitor.level).toBeGreaterThan(SOFT_CEILING);
    monitor.sample({ ...stalled, eventLoopDelayMs: 10 });
    monitor.sample({ ...stalled, eventLoopDelayMs: 10 });
    monitor.sample({ ...stalled, eventLoopDelayMs: 10 });
    expect(monitor.level).toBeLessThanOrEqual(SOFT_CEILING);
    expect(monitor.level).toBeGreaterThan(1);
  });

  it('sheds while the requests’ wait in the process stands past the target, however idle the loop', () => {
    const monitor = new SaturationMonitor({ thresholds: LIMITS, inFlight: () => 50 });
    const waiting = { ...calm, eventLoopDelayMs: 0.1, requestWaitMs: 2 * WAIT_TARGETS * LIMITS.targetDelayMs };
    monitor.sample(waiting);
    monitor.sample({ ...waiting, requestWaitMs: 1 });
    monitor.sample(waiting);
    expect(monitor.level).toBe(0);
    for (let i = 0; i < 3; i++) monitor.sample(waiting);
    expect(monitor.level).toBeGreaterThan(0);
    expect(monitor.level).toBeLessThanOrEqual(SOFT_CEILING);
    expect(monitor.pressure.signal).toBe('request_wait');
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

  describe('its delay timer', () => {
    /** Keeps the loop busy for `ms` in turns of `turnMs` (synchronous spins), letting timers run between turns. */
    async function busy(ms: number, turnMs: number): Promise<void> {
      const until = performance.now() + ms;
      while (performance.now() < until) {
        const turnEnd = performance.now() + turnMs;
        while (performance.now() < turnEnd);
        await nextTurn();
      }
    }
    const delays = (onSample: ReturnType<typeof vi.fn>, from: number) =>
      (onSample.mock.calls.slice(from) as [SaturationSignals][]).map(([signals]) => signals.eventLoopDelayMs);

    it('rests while the loop is mostly idle, reading no delay, and runs again with the first busy sample', async () => {
      const onSample = vi.fn();
      const monitor = new SaturationMonitor({ thresholds: LIMITS, inFlight: () => 0, sampleMs: 50, onSample });
      monitor.start();
      try {
        expect(monitor.watchingDelay).toBe(true);
        await vi.waitFor(() => expect(onSample.mock.calls.length).toBeGreaterThanOrEqual(3));
        expect(monitor.watchingDelay).toBe(false);
        const idleFrom = onSample.mock.calls.length;
        await sleep(250);
        expect(delays(onSample, idleFrom)).not.toHaveLength(0);
        expect(delays(onSample, idleFrom).every((delay) => delay === 0)).toBe(true);
        // Turns of 8 ms back to back: every firing of the 2 ms timer is late by most of a turn.
        const busyFrom = onSample.mock.calls.length;
        await busy(400, 8);
        expect(monitor.watchingDelay).toBe(true);
        expect(Math.max(...delays(onSample, busyFrom))).toBeGreaterThan(2);
        await vi.waitFor(() => expect(monitor.watchingDelay).toBe(false), { timeout: 2000 });
      } finally {
        monitor.stop();
      }
      expect(monitor.watchingDelay).toBe(false);
    });

    it('never rests while the level sheds, however idle the loop', async () => {
      const offered = () => Float64Array.from({ length: 12 }, (_, i) => (i === 2 ? 100 : 0));
      let before = 0;
      const seen: { before: number; watching: boolean }[] = [];
      const monitor: SaturationMonitor = new SaturationMonitor({
        thresholds: LIMITS,
        inFlight: () => 0,
        offered,
        sampleMs: 10,
        // The timer decides to rest on the level before the sample it takes.
        onSample: (_signals, _pressure, level) => {
          seen.push({ before, watching: monitor.watchingDelay });
          before = level;
        },
      });
      for (let i = 0; i < 30; i++) monitor.sample({ ...calm, eventLoopDelayMs: 20 });
      before = monitor.level;
      seen.length = 0;
      expect(before).toBeGreaterThan(0);
      monitor.start();
      try {
        await vi.waitFor(() => expect(monitor.watchingDelay).toBe(false), { timeout: 5000 });
      } finally {
        monitor.stop();
      }
      const timed = seen.filter((s) => s.before > 0);
      expect(timed.length).toBeGreaterThan(0);
      expect(timed.every((s) => s.watching)).toBe(true);
      expect(monitor.level).toBe(0);
    });
  });
});
