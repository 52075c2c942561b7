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
