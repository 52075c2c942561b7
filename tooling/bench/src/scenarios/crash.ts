/**
 * The crash check on each database: keyed creates on 32 connections, SIGKILL after 3 s, a restart on the same
 * database; every create answered 201 must be there with its id and values, and its key must replay the same bytes.
 */
import { appServer } from '../bench-servers.js';
import { crashCheck, type CrashResult } from '../crash-check.js';
import { postgresDatabase, sqliteDatabase } from '../databases.js';
import { CATALOGUE_SIZE } from '../page.js';
import type { Scenario } from '../scenario.js';
import { check, table } from '../table.js';
import { fmtInt } from '../stats.js';

const CONCURRENCY = 32;
const KILL_AFTER_MS = 3000;

export const crash: Scenario = {
  name: 'crash',
  description: 'SIGKILL during creates, restart: every 201 still there, every replay the same bytes',
  alone: true,
  async run(ctx) {
    console.log('\ncrash check: SIGKILL during creates, restart, every 201 still there ...');
    const results: Array<{ provider: string; result: CrashResult }> = [];
    for (const provider of ['sqlite', 'postgres'] as const) {
      const db = ctx.track(await (provider === 'sqlite' ? sqliteDatabase : postgresDatabase)(CATALOGUE_SIZE));
      const start = () => appServer(`crash-${provider}`, db, { redis: provider === 'postgres' });
      const result = await crashCheck(db, await start(), start, {
        concurrency: CONCURRENCY,
        killAfterMs: KILL_AFTER_MS,
      });
      results.push({ provider, result });
    }
    return {
      json: { crash: results },
      print(out) {
        out(
          `\nCrash check (creates on ${CONCURRENCY} connections, SIGKILL after ${KILL_AFTER_MS / 1000} s, restart on the same database):\n`,
        );
        out(
          table(
            [
              'database',
              '201 answers',
              'missing or different after restart',
              'replays checked',
              'replays different',
              'requests cut',
            ],
            results.map(({ provider, result: r }) => [
              provider,
              fmtInt(r.answered),
              ...[r.missing, r.replayed, r.replayMismatches, r.cut].map(String),
            ]),
          ),
        );
      },
      targets: results.map(
        ({ provider, result: r }) =>
          `Crash check on ${provider}: ${r.answered} creates answered 201 before SIGKILL, ${r.missing} missing after restart, ${r.replayMismatches} of ${r.replayed} replays different -> ${check(r.missing === 0 && r.replayMismatches === 0 && r.answered > 0)}`,
      ),
    };
  },
};
