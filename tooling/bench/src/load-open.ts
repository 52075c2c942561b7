/**
 * Open loop: a fixed arrival rate (wrk2 style). Request n is due at start + n/rate and its latency is measured from
 * when it was due, so a stall is charged to every request it delays (no coordinated omission). Keep-alive agent,
 * bounded sockets (or a new connection per request); with `graceSec`, answers still missing that long after the last
 * request was sent are given up and counted as errors; with `warmupSec`, the first requests are sent but not counted.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { Latencies, loadResult } from './latencies.js';
import type { LoadRequest, LoadResult, LoadSpec } from './load-spec.js';
import { mixedRequest } from './mix.js';
import { percentile } from './stats.js';

export async function open(spec: LoadSpec): Promise<LoadResult> {
  if (spec.startAt !== undefined) await new Promise((r) => setTimeout(r, Math.max(0, spec.startAt! - Date.now())));
  const rate = spec.rate ?? 1000;
  const total = Math.round(rate * spec.durationSec);
  const warmup = Math.min(total, Math.round(rate * (spec.warmupSec ?? 0)));
  const url = new URL(spec.origin);
  const keepAlive = spec.keepAlive !== false;
  const agent = new http.Agent({ keepAlive, maxSockets: spec.connections });
  const lat = new Latencies();
  const lag = new Latencies();
  const codes: Record<string, number> = {};
  let errors = 0;
  let sent = 0;
  let done = 0;
  let settled = false;
  return new Promise((resolve) => {
    const start = performance.now();
    const settle = () => {
      if (settled) return;
      settled = true;
      errors += total - warmup - done;
      agent.destroy();
      const measuredFrom = start + (spec.warmupSec ?? 0) * 1000;
      const result = loadResult(lat, codes, errors, (performance.now() - measuredFrom) / 1000);
      resolve({ ...result, sendLagP99: percentile(lag.values, 99) });
    };
    const fire = (n: number) => {
      const due = start + (n * 1000) / rate;
      const counts = n >= warmup;
      if (counts) lag.add(performance.now() - due);
      const r = spec.mix ? mixedRequest(spec.mix) : spec.requests[n % spec.requests.length]!;
      send(agent, url, r, (code) => {
        if (settled) return;
        if (counts && code === undefined) errors++;
        else if (counts && code !== undefined) {
          codes[code] = (codes[code] ?? 0) + 1;
          if (code >= 200 && code < 300) lat.add(performance.now() - due);
        }
        finish(counts);
      });
    };
    let uncounted = 0;
    const finish = (counts: boolean) => {
      if (counts) done++;
      else uncounted++;
      if (done + uncounted === total) settle();
    };
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) * rate) / 1000) + 1);
      while (sent < due) fire(sent++);
      if (sent < total) setTimeout(tick, 1);
      else if (spec.graceSec !== undefined) setTimeout(settle, spec.graceSec * 1000).unref();
    };
    tick();
  });
}

/** Sends one request; `done` gets its status once the answer is read, or undefined when it failed. */
function send(agent: http.Agent, url: URL, r: LoadRequest, done: (status: number | undefined) => void): void {
  const req = http.request(
    { agent, host: url.hostname, port: url.port, method: r.method, path: r.path, headers: r.headers ?? {} },
    (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode ?? 0));
    },
  );
  req.on('error', () => done(undefined));
  req.end(r.body);
}
