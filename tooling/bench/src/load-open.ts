/**
 * Open loop: a fixed arrival rate (wrk2 style). Request n is due at start + n/rate and its latency is measured from
 * when it was due, so a stall is charged to every request it delays (no coordinated omission). Keep-alive agent,
 * bounded sockets.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { Latencies, loadResult } from './latencies.js';
import type { LoadResult, LoadSpec } from './load-spec.js';

export function open(spec: LoadSpec): Promise<LoadResult> {
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
        resolve(loadResult(lat, codes, errors, (performance.now() - start) / 1000));
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
