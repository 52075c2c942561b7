/** Runs one load (load.ts) in a process of its own and answers its result; killed if it outlives its time. */
import { fork } from 'node:child_process';
import { join } from 'node:path';
import type { LoadResult, LoadSpec } from './load-spec.js';
import { BENCH_DIST } from './paths.js';

export function load(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = fork(join(BENCH_DIST, 'load.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.send(spec);
    let result: LoadResult | undefined;
    const timer = setTimeout(() => child.kill('SIGKILL'), (spec.durationSec + (spec.graceSec ?? 60) + 30) * 1000);
    child.on('message', (m) => {
      result = withNaN(m as LoadResult);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (result) resolve(result);
      else reject(new Error(`load generator exited with ${code} and no result`));
    });
  });
}

/** JSON carries NaN (a percentile of no answers) as null: back to NaN, so no figure reads as 0 ms. */
function withNaN(r: LoadResult): LoadResult {
  const n = (x: number | null | undefined) => (typeof x === 'number' ? x : NaN);
  return {
    ...r,
    p50: n(r.p50),
    p90: n(r.p90),
    p99: n(r.p99),
    p999: n(r.p999),
    max: n(r.max),
    sendLagP99: n(r.sendLagP99),
  };
}
