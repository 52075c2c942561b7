import { describe, expect, it } from 'vitest';
import { meanInterval } from './stats.js';
import type { RoundResult } from './rounds.js';
import { busyOf, costOf, MAX_BUSY, VARIANTS, variantsOf, verdictOf, type WorkloadResults } from './tracing-cost.js';

describe('meanInterval', () => {
  it('gives the mean and a 90 % Student-t interval around it', () => {
    // Mean 2, sample variance 2/3, n 4: the half-width is t(0.95, 3 degrees of freedom) * sd / sqrt(4).
    const { mean, low, high } = meanInterval([1, 2, 2, 3]);
    expect(mean).toBe(2);
    const sd = Math.sqrt(2 / 3);
    expect(high - mean).toBeCloseTo((2.353 * sd) / 2, 10);
    expect(mean - low).toBeCloseTo((2.353 * sd) / 2, 10);
  });

  it('narrows as measurements of the same spread accumulate', () => {
    const few = meanInterval([0.01, 0.03, 0.05]);
    const many = meanInterval([0.01, 0.03, 0.05, 0.01, 0.03, 0.05, 0.01, 0.03, 0.05]);
    expect(many.mean).toBeCloseTo(few.mean, 12);
    expect(many.high - many.low).toBeLessThan((few.high - few.low) / 2);
  });

  it('uses the t of 30 degrees of freedom past 30', () => {
    const values = Array.from({ length: 41 }, (_, i) => i % 2);
    const { mean, high } = meanInterval(values);
    const sd = Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / 40);
    expect(high - mean).toBeCloseTo((1.697 * sd) / Math.sqrt(41), 10);
  });

  it('gives no interval for a single measurement', () => {
    expect(meanInterval([0.04])).toEqual({ mean: 0.04, low: -Infinity, high: Infinity });
  });
});

describe('verdictOf', () => {
  const variant = (name: string) => VARIANTS.find((v) => v.name === name)!;

  it('meets a target only when the whole interval is within it', () => {
    expect(verdictOf(variant('10'), { mean: 0.03, low: 0.02, high: 0.05 })).toBe('met');
    expect(verdictOf(variant('10'), { mean: 0.03, low: 0.01, high: 0.051 })).toBe('not resolved');
    expect(verdictOf(variant('10'), { mean: 0.07, low: 0.051, high: 0.09 })).toBe('NOT met');
  });

  it("holds off's interval strictly below its bound", () => {
    expect(verdictOf(variant('off'), { mean: 0, low: -0.01, high: 0.02 })).toBe('not resolved');
    expect(verdictOf(variant('off'), { mean: 0, low: -0.01, high: 0.019 })).toBe('met');
    expect(verdictOf(variant('off'), { mean: 0.03, low: 0.02, high: 0.04 })).toBe('NOT met');
  });

  it('leaves a single round unresolved', () => {
    expect(verdictOf(variant('100'), { mean: 0.1, low: -Infinity, high: Infinity })).toBe('not resolved');
  });
});

/** A workload's results: each variant's CPU per answer (µs) by round, every server at `rps`. */
function workload(cpuUs: Record<string, number[]>, rps = 200): WorkloadResults {
  const result = (us: number) => ({ rps, serverCpuUsPerRequest: us }) as RoundResult;
  return new Map(Object.entries(cpuUs).map(([variant, rounds]) => [variant, rounds.map(result)]));
}

describe('busyOf', () => {
  it("sums the four servers' share of one CPU in each round and takes the median", () => {
    // Round shares: 200 req/s x (500 + 500 + 520 + 580) µs = 0.42; x (600 + 600 + 640 + 660) = 0.5; 0.9.
    const w = workload({
      baseline: [500, 600, 1100],
      off: [500, 600, 1100],
      '10': [520, 640, 1150],
      '100': [580, 660, 1150],
    });
    expect(busyOf(w)).toBeCloseTo(0.5, 10);
  });
});

describe('costOf', () => {
  const ten = VARIANTS.find((v) => v.name === '10')!;
  const rounds = (base: number) => ({
    baseline: [base, base, base],
    off: [base, base, base],
    '10': [base * 1.02, base * 1.03, base * 1.04],
    '100': [base * 1.1, base * 1.1, base * 1.1],
  });

  it('judges a run whose servers stayed below the share of the CPU the method allows', () => {
    const cost = costOf(ten, [workload(rounds(400)), workload(rounds(600))]);
    expect(cost.cost.mean).toBeCloseTo(0.03, 10);
    expect(cost.verdict).toBe('met');
  });

  it('does not judge a run in which one workload took more of the CPU than that', () => {
    // The median round: 200 req/s x (1 + 1 + 1.03 + 1.1) x 950 µs = 0.78 of CPU 0 on the second workload.
    expect(4.13 * 950 * 200 * 1e-6).toBeGreaterThan(MAX_BUSY);
    const cost = costOf(ten, [workload(rounds(400)), workload(rounds(950))]);
    expect(cost.cost.mean).toBeCloseTo(0.03, 10);
    expect(cost.verdict).toBe('not judged');
  });
});

describe('variantsOf', () => {
  const names = (list: string[] | undefined) => variantsOf(list).map((v) => v.name);

  it('measures every variant when none is named', () => {
    expect(names(undefined)).toEqual(['baseline', 'off', '10', '100']);
  });

  it('measures the named ones beside the baseline, in the report order', () => {
    expect(names(['10'])).toEqual(['baseline', '10']);
    expect(names(['100', 'off'])).toEqual(['baseline', 'off', '100']);
  });

  it('refuses a name it does not know, the baseline alone and an empty list', () => {
    expect(() => variantsOf(['10', '50'])).toThrow(/not "10,50"/);
    expect(() => variantsOf(['baseline'])).toThrow(/the baseline always runs/);
    expect(() => variantsOf([])).toThrow(/BENCH_TRACING_VARIANTS/);
  });
});
