/**
 * Throughput (closed loop): the service's list, create and get on SQLite + memory and PostgreSQL + Redis (also through
 * PgBouncer and on a Redis Cluster), against the node:http ceiling, the Express floors and the hand-written reference,
 * in the same alternating rounds. Ratios are to the floor on the service's own server construction.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpus } from 'node:os';
import { barChart, type Bar } from '../chart.js';
import { useFleet, type Fleet } from '../fleet.js';
import type { LoadRequest } from '../load-spec.js';
import { RESULTS } from '../paths.js';
import { CANNED, create, distinctPages, get, list } from '../requests.js';
import { measure, type Summary, type Target } from '../rounds.js';
import type { RunningServer } from '../servers.js';
import type { Out, Scenario } from '../scenario.js';
import { settings } from '../settings.js';
import { check, table } from '../table.js';
import { fmtInt, fmtMs, fmtRatio } from '../stats.js';

const target = (
  name: string,
  label: string,
  kind: Bar['kind'],
  server: RunningServer,
  requests: LoadRequest[],
): Target => ({ name, label, kind, server, requests });

function targets(f: Fleet): Target[] {
  const [s, p] = [f.sqlite.key, f.postgres.key];
  return [
    target('ceiling', 'ceiling: node:http canned page', 'baseline', f.ceiling, [CANNED]),
    target('floor', 'floor: Express canned page', 'baseline', f.floor, [CANNED]),
    target('floor-plain', 'floor on plain app.listen', 'baseline', f.floorPlain, [CANNED]),
    target('handwritten', 'reference: hand-written list', 'baseline', f.handwritten, [list(s)]),
    target('sqlite-list', 'SQLite+memory  list (limit 20)', 'sqlite', f.sqliteServer, [list(s)]),
    target('sqlite-list-uncached', 'SQLite+memory  list, page cache off', 'sqlite', f.sqliteUncached, [list(s)]),
    target('sqlite-create', 'SQLite+memory  create', 'sqlite', f.sqliteServer, [create(s)]),
    target('sqlite-get', 'SQLite+memory  get by id', 'sqlite', f.sqliteServer, [get(s)]),
    target('pg-list', 'Postgres+Redis list (limit 20)', 'postgres', f.pgServer, [list(p)]),
    target('pg-list-uncoalesced', 'Postgres+Redis list, coalescing off', 'postgres', f.pgUncoalesced, [list(p)]),
    target('pg-list-distinct', 'Postgres+Redis list, 40 pages in turn', 'postgres', f.pgServer, distinctPages(p)),
    target('pg-create', 'Postgres+Redis create', 'postgres', f.pgServer, [create(p)]),
    target('pg-get', 'Postgres+Redis get by id', 'postgres', f.pgServer, [get(p)]),
    target('pgb-list', 'Postgres via PgBouncer list', 'postgres', f.pgbServer, [list(p)]),
    target('pgb-list-distinct', 'Postgres via PgBouncer, 40 pages', 'postgres', f.pgbServer, distinctPages(p)),
    target('pgb-create', 'Postgres via PgBouncer create', 'postgres', f.pgbServer, [create(p)]),
    target('cluster-list', 'Postgres+Redis Cluster list', 'postgres', f.clusterServer, [list(p)]),
  ];
}

type Rows = Map<string, Summary>;
const row = (rows: Rows, name: string): Summary => rows.get(name)!;

function printTable(out: Out, throughput: Summary[], floor: Summary, ceiling: Summary): void {
  out(
    table(
      ['scenario', 'req/s', 'p50', 'p99', 'vs floor', 'vs ceiling', 'server CPU/req', 'rounds (req/s)'],
      throughput.map((s) => [
        s.label,
        fmtInt(s.rps),
        fmtMs(s.p50),
        fmtMs(s.p99),
        fmtRatio(s.rps / floor.rps),
        fmtRatio(s.rps / ceiling.rps),
        `${s.cpuUs.toFixed(0)} µs`,
        s.rounds.map(fmtInt).join(' / ') + (s.failures ? ` (!${s.failures} failed)` : ''),
      ]),
    ),
  );
}

/** The plain floor and the hand-written reference, as yardsticks of their own. */
function printNotes(out: Out, rows: Rows): void {
  const [floor, sl, pl, su] = ['floor', 'sqlite-list', 'pg-list', 'sqlite-list-uncached'].map((n) => row(rows, n));
  const [fp, hw] = [row(rows, 'floor-plain'), row(rows, 'handwritten')];
  out(
    `\nThe floor runs on the service's server construction (requests created with the app's prototypes); on Express's plain ` +
      `app.listen it reached ${fmtRatio(fp.rps / floor!.rps)} of that. Against the plain floor: SQLite list ${fmtRatio(sl!.rps / fp.rps)}, ` +
      `Postgres list ${fmtRatio(pl!.rps / fp.rps)}, reference ${fmtRatio(hw.rps / fp.rps)}.`,
  );
  out(
    `\nReference: a hand-written Express + better-sqlite3 list with a key check (no contract, limiter, ids, logs, metrics, ` +
      `on plain app.listen) reached ${fmtRatio(hw.rps / floor!.rps)} of the floor in this run; the service's list reached ${fmtRatio(sl!.rps / hw.rps)} of it ` +
      `(${fmtRatio(su!.rps / hw.rps)} with the page cache off, every request reading the database as the reference does).`,
  );
}

function targetLines(rows: Rows): string[] {
  const [floor, sl, su, pl, pu] = [
    'floor',
    'sqlite-list',
    'sqlite-list-uncached',
    'pg-list',
    'pg-list-uncoalesced',
  ].map((n) => row(rows, n)) as [Summary, Summary, Summary, Summary, Summary];
  const ratio = (s: Summary) => s.rps / floor.rps;
  return [
    `List, SQLite + memory limiter >= 0.60 of the Express floor: ${fmtRatio(ratio(sl))} -> ${check(ratio(sl) >= 0.6)}` +
      ` (page cache off: ${fmtRatio(ratio(su))} -> ${check(ratio(su) >= 0.6)})`,
    `List, Postgres + Redis limiter >= 0.40 of the Express floor: ${fmtRatio(ratio(pl))} -> ${check(ratio(pl) >= 0.4)}` +
      ` (coalescing off: ${fmtRatio(ratio(pu))} -> ${check(ratio(pu) >= 0.4)})`,
  ];
}

function writeChart(throughput: Summary[], floor: Summary, startedAt: Date): string {
  const cpu = cpus();
  const svg = barChart(
    'Animal Store: throughput vs the Express floor and the node:http ceiling',
    `${cpu.length} cpus ${cpu[0]?.model ?? 'unknown'}, node ${process.version}; ${settings.connections} connections, ${settings.seconds} s x ${settings.rounds} alternating rounds, medians; ${startedAt.toISOString()}`,
    throughput.map((s) => ({
      label: s.label,
      value: s.rps,
      kind: s.kind,
      note: `(${fmtRatio(s.rps / floor.rps)} of floor)`,
    })),
  );
  const file = join(RESULTS, 'throughput.svg');
  writeFileSync(file, svg);
  return file;
}

export const throughput: Scenario = {
  name: 'throughput',
  description: 'closed loop: list, create, get on both databases, PgBouncer, Redis Cluster, against ceiling and floors',
  async run(ctx) {
    const startedAt = new Date();
    const all = targets(await useFleet(ctx));
    console.log('throughput (closed loop):');
    const rows = await measure(all);
    const summaries = all.map((t) => row(rows, t.name));
    const [floor, ceiling] = [row(rows, 'floor'), row(rows, 'ceiling')];
    return {
      json: { throughput: summaries },
      print(out) {
        printTable(out, summaries, floor, ceiling);
        printNotes(out, rows);
      },
      targets: targetLines(rows),
      files: [writeChart(summaries, floor, startedAt)],
    };
  },
};
