/**
 * Cost growth: the same filtered page (`status=sold&limit=100`, the sold pets created last) on catalogues of 1,000 and
 * 50,000 pets, SQLite + memory with the page cache off, so every request runs the query; p50 ratio large/small.
 */
import { appServer, NO_PAGE_CACHE } from '../bench-servers.js';
import { sqliteDatabase } from '../databases.js';
import { list } from '../requests.js';
import { measure, type Summary, type Target } from '../rounds.js';
import type { Scenario } from '../scenario.js';
import { settings } from '../settings.js';
import { check, table } from '../table.js';
import { fmtInt, fmtMs, fmtRatio } from '../stats.js';

const SMALL = 1_000;
const LARGE = 50_000;
const QUERY = '?status=sold&limit=100';
const MAX_GROWTH = 1.5;

function printGrowth(out: (line?: string) => void, small: Summary, large: Summary): void {
  out(
    `\nCost growth: GET /v1/pets${QUERY}, SQLite + memory limiter, page cache off (every request runs the query), ${settings.connections} connections:\n`,
  );
  out(
    table(
      ['catalogue', 'req/s', 'p50', 'p99', 'rounds (req/s)'],
      [small, large].map((s) => [s.label, fmtInt(s.rps), fmtMs(s.p50), fmtMs(s.p99), s.rounds.map(fmtInt).join(' / ')]),
    ),
  );
  out(
    `p50 ${fmtInt(LARGE)}/${fmtInt(SMALL)}: ${fmtRatio(large.p50 / small.p50)}   (req/s ${fmtInt(SMALL)}/${fmtInt(LARGE)}: ${fmtRatio(small.rps / large.rps)})`,
  );
}

export const growth: Scenario = {
  name: 'growth',
  description: `one filtered page on ${fmtInt(SMALL)} and ${fmtInt(LARGE)} pets (SQLite, page cache off): p50 ratio`,
  async run(ctx) {
    console.log(
      `\ncost growth: GET /v1/pets${QUERY} (sold pets created last) on ${fmtInt(SMALL)} and ${fmtInt(LARGE)} pets, SQLite+memory, page cache off:`,
    );
    const small = ctx.track(await sqliteDatabase(SMALL));
    const large = ctx.track(await sqliteDatabase(LARGE));
    const targets: Target[] = [
      {
        name: 'small',
        label: `filtered page, ${fmtInt(SMALL)} pets`,
        kind: 'sqlite',
        server: await appServer('growth-1k', small, { env: NO_PAGE_CACHE }),
        requests: [list(small.key, QUERY)],
      },
      {
        name: 'large',
        label: `filtered page, ${fmtInt(LARGE)} pets`,
        kind: 'sqlite',
        server: await appServer('growth-50k', large, { env: NO_PAGE_CACHE }),
        requests: [list(large.key, QUERY)],
      },
    ];
    const rows = await measure(targets);
    for (const t of targets) await t.server.stop();
    const result = { small: rows.get('small')!, large: rows.get('large')! };
    const ratio = result.large.p50 / result.small.p50;
    return {
      json: { growth: result },
      print: (out) => printGrowth(out, result.small, result.large),
      targets: [
        `Cost growth 1k -> 50k pets <= ${MAX_GROWTH}x (p50): ${fmtRatio(ratio)} -> ${check(ratio <= MAX_GROWTH)}`,
      ],
    };
  },
};
