/** Runs one load (load.ts) in a process of its own and answers its result; killed if it outlives its time. */
import { fork } from 'node:child_process';
import { join } from 'node:path';
import type { LoadResult, LoadSpec } from './load-spec.js';
import { BENCH_DIST } from './paths.js';

export function load(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = fork(join(BENCH_DIST, 'load.js'), [JSON.stringify(spec)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let result: LoadResult | undefined;
    const timer = setTimeout(() => child.kill('SIGKILL'), (spec.durationSec + 60) * 1000);
    child.on('message', (m) => {
      result = m as LoadResult;
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (result) resolve(result);
      else reject(new Error(`load generator exited with ${code} and no result`));
    });
  });
}
