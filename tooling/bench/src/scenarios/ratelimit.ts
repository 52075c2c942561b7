/**
 * The limiter alone: decisions per second of ours against rate-limiter-flexible (rate-limit.ts, run as a child
 * process with no server up: memory, Redis, one busy identity, Redis Cluster), its table reprinted.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BENCH_DIST } from '../paths.js';
import type { Scenario } from '../scenario.js';
import { settings } from '../settings.js';
import { table } from '../table.js';
import { fmtInt } from '../stats.js';

interface LimiterRow {
  scenario: string;
  ours: number;
  theirs: number;
  ratio: string;
}

/** The rows of rate-limit.ts's table ("redis cluster: ..." included). */
function rowsOf(stdout: string): LimiterRow[] {
  const n = (s: string | undefined) => Number((s ?? '').replace(/,/g, ''));
  return stdout
    .split('\n')
    .filter((l) => /^\| (memory|redis)/.test(l))
    .map((l) => {
      const cells = l.split('|').map((c) => c.trim());
      return { scenario: cells[1] ?? '', ours: n(cells[2]), theirs: n(cells[3]), ratio: cells[4] ?? '' };
    });
}

export const ratelimit: Scenario = {
  name: 'ratelimit',
  description: 'limiter decisions per second, ours vs rate-limiter-flexible (memory, Redis, Redis Cluster)',
  alone: true,
  async run(ctx) {
    console.log(
      '\nlimiter decisions per second vs rate-limiter-flexible (tooling/bench rate-limit.ts, 5 alternating rounds) ...',
    );
    const script = join(BENCH_DIST, 'rate-limit.js');
    if (!existsSync(script)) throw new Error(`${script} missing: build tooling/bench first`);
    const { redisCluster } = await ctx.scaleOut();
    const { stdout } = await promisify(execFile)(process.execPath, [script], {
      env: { ...process.env, REDIS_URL: settings.redisUrl, REDIS_CLUSTER_NODES: redisCluster.nodes },
      timeout: 240_000,
    });
    const rows = rowsOf(stdout);
    return {
      json: { rateLimit: rows },
      print(out) {
        out(
          '\nLimiter decisions per second (tooling/bench rate-limit.ts, ours vs rate-limiter-flexible, medians of 5 alternating rounds):\n',
        );
        out(
          table(
            ['scenario', 'ours/s', 'rate-limiter-flexible/s', 'ours/theirs'],
            rows.map((r) => [r.scenario, fmtInt(r.ours), fmtInt(r.theirs), r.ratio]),
          ),
        );
      },
    };
  },
};
