/** Latencies of one load run and its summary (percentiles of the 2xx answers, counts by status). */
import type { LoadResult } from './load-spec.js';
import { percentile } from './stats.js';

export class Latencies {
  #values = new Float64Array(1 << 20);
  #n = 0;
  add(ms: number): void {
    if (this.#n === this.#values.length) {
      const grown = new Float64Array(this.#values.length * 2);
      grown.set(this.#values);
      this.#values = grown;
    }
    this.#values[this.#n++] = ms;
  }
  get values(): Float64Array {
    return this.#values.subarray(0, this.#n);
  }
}

export function loadResult(
  lat: Latencies,
  codes: Record<string, number>,
  errors: number,
  elapsedSec: number,
): LoadResult {
  let ok = 0;
  let non2xx = 0;
  for (const [code, count] of Object.entries(codes)) {
    if (code.startsWith('2')) ok += count;
    else non2xx += count;
  }
  const v = lat.values;
  return {
    ok,
    non2xx,
    errors,
    elapsedSec,
    rps: ok / elapsedSec,
    p50: percentile(v, 50),
    p90: percentile(v, 90),
    p99: percentile(v, 99),
    p999: percentile(v, 99.9),
    max: percentile(v, 100),
    statusCodes: codes,
  };
}
