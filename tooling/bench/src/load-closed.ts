/**
 * Closed loop: autocannon, a fixed number of keep-alive connections sending back to back for a fixed duration
 * (throughput, and latency under saturation).
 */
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { Latencies, loadResult } from './latencies.js';
import type { LoadResult, LoadSpec } from './load-spec.js';
import { mixedRequest } from './mix.js';

export function closed(spec: LoadSpec): Promise<LoadResult> {
  const lat = new Latencies();
  const codes: Record<string, number> = {};
  const mix = spec.mix;
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const instance = autocannon(
      {
        url: spec.origin,
        connections: spec.connections,
        pipelining: 1,
        duration: spec.durationSec,
        timeout: 10,
        requests: mix
          ? [{ setupRequest: (request) => ({ ...request, ...mixedRequest(mix) }) }]
          : spec.requests.map((r) => ({
              method: r.method,
              path: r.path,
              headers: r.headers ?? {},
              ...(r.body === undefined ? {} : { body: r.body }),
            })),
      },
      (err, result) => {
        if (err) {
          reject(err);
          return;
        }
        const elapsed = (performance.now() - started) / 1000;
        resolve(loadResult(lat, codes, result.errors + result.timeouts, elapsed));
      },
    );
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      codes[statusCode] = (codes[statusCode] ?? 0) + 1;
      if (statusCode >= 200 && statusCode < 300) lat.add(responseTime);
    });
  });
}
