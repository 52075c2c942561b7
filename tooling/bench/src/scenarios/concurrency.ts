/**
 * What the limit of requests in flight per key costs (issue #25 §1): the same list with CONCURRENCY_LIMITS off, in
 * each process's memory (replica) and in Redis (shared, exact across replicas), on SQLite + memory and on PostgreSQL +
 * Redis, in the same alternating rounds (closed loop; the key's limit is far above the connections, so nothing is
 * refused and only the bookkeeping is measured).
 */
import { appServer } from '../bench-servers.js';
import { postgresDatabase, sqliteDatabase } from '../databases.js';
import { CATALOGUE_SIZE } from '../page.js';
import { list } from '../requests.js';
import { measure, type Summary, type Target } from '../rounds.js';
import type { Scenario } from '../scenario.js';
import { fmtInt, fmtMs, fmtRatio } from '../stats.js';
import { table } from '../table.js';

const SCOPES = ['off', 'replica', 'shared'] as const;

export const concurrency: Scenario = {
  name: 'concurrency',
  description: 'cost of the per-key limit of requests in flight: off, per process, shared in Redis',
  alone: true,
  async run(ctx) {
    console.log('\nconcurrency limit: list with CONCURRENCY_LIMITS off / replica / shared (closed loop) ...');
    const sqlite = ctx.track(await sqliteDatabase(CATALOGUE_SIZE));
    const postgres = ctx.track(await postgresDatabase(CATALOGUE_SIZE));
    const targets: Target[] = [];
    /** The list on a server of `db` with CONCURRENCY_LIMITS=`scope` (PostgreSQL's limits and leases in Redis). */
    const add = async (kind: 'sqlite' | 'postgres', scope: (typeof SCOPES)[number]) => {
      const [db, short, setup] =
        kind === 'sqlite' ? [sqlite, 'sqlite', 'SQLite+memory'] : [postgres, 'pg', 'Postgres+Redis'];
      const env = { CONCURRENCY_LIMITS: scope };
      const server = await appServer(`${short}-concurrency-${scope}`, db, { redis: kind === 'postgres', env });
      targets.push({ name: `${short}-${scope}`, label: `${setup}, ${scope}`, kind, server, requests: [list(db.key)] });
    };
    for (const scope of SCOPES) {
      // A per-key count shared by replicas needs Redis, which the SQLite setup runs without.
      if (scope !== 'shared') await add('sqlite', scope);
      await add('postgres', scope);
    }
    const rows = await measure(targets);
    const off = (name: string) => rows.get(name.startsWith('sqlite') ? 'sqlite-off' : 'pg-off')!;
    const summaries = targets.map((t) => rows.get(t.name)!);
    return {
      json: { concurrency: summaries },
      print(out) {
        out('\nThe limit of requests in flight per key, list (limit 20), closed loop, medians of the rounds:\n');
        out(
          table(
            ['setup, CONCURRENCY_LIMITS', 'req/s', 'p50', 'p99', 'server CPU/req', 'vs off (req/s)', 'CPU vs off'],
            summaries.map((s: Summary) => [
              s.label,
              fmtInt(s.rps),
              fmtMs(s.p50),
              fmtMs(s.p99),
              `${s.cpuUs.toFixed(0)} µs`,
              fmtRatio(s.rps / off(s.name).rps),
              `${(s.cpuUs - off(s.name).cpuUs).toFixed(0)} µs`,
            ]),
          ),
        );
      },
    };
  },
};
