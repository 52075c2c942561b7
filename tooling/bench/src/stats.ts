export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Nearest-rank percentile of unsorted values (p in 0..100). */
export function percentile(values: Float64Array | readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const s = Float64Array.from(values).sort();
  const rank = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[rank]!;
}

export const fmtInt = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
export const fmtMs = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(2)} ms` : 'n/a');
export const fmtRatio = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(2)}x` : 'n/a');

/** Student's t at 95 % (one-sided) for 1 to 30 degrees of freedom. */
const T95 = [
  6.314, 2.92, 2.353, 2.132, 2.015, 1.943, 1.895, 1.86, 1.833, 1.812, 1.796, 1.782, 1.771, 1.761, 1.753, 1.746, 1.74,
  1.734, 1.729, 1.725, 1.721, 1.717, 1.714, 1.711, 1.708, 1.706, 1.703, 1.701, 1.699, 1.697,
];

export interface Interval {
  mean: number;
  low: number;
  high: number;
}

/**
 * The mean of independent measurements and its two-sided 90 % confidence interval (Student's t), so that each end is a
 * one-sided 95 % bound. Past 30 degrees of freedom, 30's t (an interval slightly wider than it need be); with fewer
 * than two values, no interval (-Infinity .. Infinity).
 */
export function meanInterval(values: readonly number[]): Interval {
  const n = values.length;
  const mean = values.reduce((s, v) => s + v, 0) / n;
  if (n < 2) return { mean, low: -Infinity, high: Infinity };
  const variance = values.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1);
  const half = T95[Math.min(n - 1, T95.length) - 1]! * Math.sqrt(variance / n);
  return { mean, low: mean - half, high: mean + half };
}
