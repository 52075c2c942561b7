/**
 * Latency at a fixed rate: 1,000 req/s for 10 s (after a 2 s warm-up) in an open loop, latency measured from each
 * request's scheduled send time, on the floors and the service's list with and without its caches.
 */
import { useFleet, type Fleet } from '../fleet.js';
import { load } from '../load-client.js';
import type { LoadRequest, LoadResult, LoadSpec } from '../load-spec.js';
import { CANNED, list } from '../requests.js';
import type { RunningServer } from '../servers.js';
import type { Scenario } from '../scenario.js';
import { check, table } from '../table.js';
import { fmtInt, fmtMs } from '../stats.js';

const FIXED_RATE = 1000;
const FIXED_SECONDS = 10;
/** The p99 every list must stay under at that rate (the floors are shown, not judged). */
const P99_TARGET_MS = 20;

const runs = (f: Fleet): Array<[string, RunningServer, LoadRequest]> => [
  ['floor: Express canned page', f.floor, CANNED],
  ['floor on plain app.listen', f.floorPlain, CANNED],
  ['SQLite+memory  list (limit 20)', f.sqliteServer, list(f.sqlite.key)],
  ['SQLite+memory  list, page cache off', f.sqliteUncached, list(f.sqlite.key)],
  ['Postgres+Redis list (limit 20)', f.pgServer, list(f.postgres.key)],
  ['Postgres+Redis list, coalescing off', f.pgUncoalesced, list(f.postgres.key)],
];
const JUDGED_FROM = 2;

const openSpec = (server: RunningServer, req: LoadRequest, durationSec: number): LoadSpec => ({
  mode: 'open',
  origin: server.origin,
  requests: [req],
  connections: 64,
  durationSec,
  rate: FIXED_RATE,
});

export const latency: Scenario = {
  name: 'latency',
  description: `open loop at ${FIXED_RATE} req/s for ${FIXED_SECONDS} s: p50/p90/p99/max from the scheduled send time`,
  async run(ctx) {
    const fleet = await useFleet(ctx);
    console.log(
      `\nfixed rate (open loop, ${FIXED_RATE} req/s for ${FIXED_SECONDS} s, latency from the scheduled send time):`,
    );
    const fixed: Array<{ label: string; res: LoadResult }> = [];
    for (const [label, server, req] of runs(fleet)) {
      await load(openSpec(server, req, 2)); // warm-up
      const res = await load(openSpec(server, req, FIXED_SECONDS));
      console.log(
        `  ${label.padEnd(34)} ${fmtInt(res.rps)} req/s   p50 ${fmtMs(res.p50)}  p90 ${fmtMs(res.p90)}  p99 ${fmtMs(res.p99)}  max ${fmtMs(res.max)}  non-2xx ${res.non2xx}`,
      );
      fixed.push({ label, res });
    }
    return {
      json: { fixedRate: fixed },
      print(out) {
        out(
          `\nFixed rate ${FIXED_RATE} req/s, ${FIXED_SECONDS} s, open loop (latency from the scheduled send time):\n`,
        );
        out(
          table(
            ['scenario', 'achieved req/s', 'p50', 'p90', 'p99', 'max', 'non-2xx'],
            fixed.map(({ label, res }) => [
              label,
              fmtInt(res.rps),
              ...[res.p50, res.p90, res.p99, res.max].map(fmtMs),
              String(res.non2xx + res.errors),
            ]),
          ),
        );
      },
      targets: fixed
        .slice(JUDGED_FROM)
        .map(
          ({ label, res }) =>
            `p99 at ${FIXED_RATE} req/s below ${P99_TARGET_MS} ms (${label.trim()}): ${fmtMs(res.p99)} -> ${check(res.p99 < P99_TARGET_MS)}`,
        ),
    };
  },
};
