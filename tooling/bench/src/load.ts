/**
 * The load generator, run as a separate process (`fork`) so it never shares an event loop with a server.
 *
 * - `closed`: autocannon, a fixed number of keep-alive connections sending back to back for a fixed duration
 *   (throughput, and latency under saturation).
 * - `open`: a fixed arrival rate (wrk2 style): request n is due at start + n/rate, latency is measured from when it was
 *   due, so a stall is charged to every request it delays (no coordinated omission). Keep-alive agent, bounded sockets.
 *
 * Receives a LoadSpec as JSON in argv[2]; sends one LoadResult to the parent over IPC and exits.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { mixedRequest, type MixSpec } from './mixed.js';
import { percentile } from './stats.js';

export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadSpec {
  mode: 'closed' | 'open';
  /** Origin, e.g. http://127.0.0.1:3000 (127.0.0.1 only). */
  origin: string;
  /** Sent in turn (each connection cycles through them). */
  requests: LoadRequest[];
  connections: number;
  durationSec: number;
  /** Requests per second (open mode). */
  rate?: number;
  /** Closed mode: instead of `requests`, each request drawn at random from this mix (see mixed.ts). */
  mix?: MixSpec;
}

export interface LoadResult {
  ok: number;
  non2xx: number;
  errors: number;
  elapsedSec: number;
  /** 2xx answers per second. */
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  statusCodes: Record<string, number>;
}

class Latencies {
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

function summarise(lat: Latencies, codes: Record<string, number>, errors: number, elapsedSec: number): LoadResult {
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
    max: percentile(v, 100),
    statusCodes: codes,
  };
}

function closed(spec: LoadSpec): Promise<LoadResult> {
  const lat = new Latencies();
  const codes: Record<string, number> = {};
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const instance = autocannon(
      {
        url: spec.origin,
        connections: spec.connections,
        pipelining: 1,
        duration: spec.durationSec,
        timeout: 10,
        requests: spec.mix
          ? [{ setupRequest: (request) => ({ ...request, ...mixedRequest(spec.mix!) }) }]
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
        resolve(summarise(lat, codes, result.errors + result.timeouts, elapsed));
      },
    );
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      codes[statusCode] = (codes[statusCode] ?? 0) + 1;
      if (statusCode >= 200 && statusCode < 300) lat.add(responseTime);
    });
  });
}

function open(spec: LoadSpec): Promise<LoadResult> {
  const rate = spec.rate ?? 1000;
  const total = Math.round(rate * spec.durationSec);
  const url = new URL(spec.origin);
  const agent = new http.Agent({ keepAlive: true, maxSockets: spec.connections });
  const lat = new Latencies();
  const codes: Record<string, number> = {};
  let errors = 0;
  let sent = 0;
  let done = 0;
  return new Promise((resolve) => {
    const start = performance.now();
    const fire = (n: number) => {
      const due = start + (n * 1000) / rate;
      const r = spec.requests[n % spec.requests.length]!;
      const req = http.request(
        { agent, host: url.hostname, port: url.port, method: r.method, path: r.path, headers: r.headers ?? {} },
        (res) => {
          res.resume();
          res.on('end', () => {
            const code = res.statusCode ?? 0;
            codes[code] = (codes[code] ?? 0) + 1;
            if (code >= 200 && code < 300) lat.add(performance.now() - due);
            finish();
          });
        },
      );
      req.on('error', () => {
        errors++;
        finish();
      });
      req.end(r.body);
    };
    const finish = () => {
      done++;
      if (done === total) {
        agent.destroy();
        resolve(summarise(lat, codes, errors, (performance.now() - start) / 1000));
      }
    };
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) * rate) / 1000) + 1);
      while (sent < due) fire(sent++);
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '{}') as LoadSpec;
  const origin = new URL(spec.origin);
  if (origin.hostname !== '127.0.0.1') throw new Error(`load runs against 127.0.0.1 only, not ${origin.hostname}`);
  const result = spec.mode === 'open' ? await open(spec) : await closed(spec);
  process.send?.(result, () => process.exit(0));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
