/**
 * Two builds of the server in the same alternating rounds (a before/after of two commits): this run's build and the
 * one BENCH_COMPARE_DIST names, each on databases its own key CLI migrated, against the same floors. Per server
 * CPU-second and req/s for the repeated list, get by id, create and the varied pages with 0, 10 and 100 % creates, on
 * SQLite + memory and PostgreSQL + Redis. Opt-in: BENCH_ONLY=compare.
 */
import { appServer } from '../bench-servers.js';
import { floorTargets, mixedDatabase, type Provider, variedTargets } from '../mixed-workload.js';
import { COMPARE_DIST, SERVER_DIST } from '../paths.js';
import { create, get, list } from '../requests.js';
import { measure, type Summary, type Target } from '../rounds.js';
import type { Out, RunContext, Scenario } from '../scenario.js';
import { table } from '../table.js';
import { fmtInt, fmtRatio } from '../stats.js';

interface Build {
  /** `before` (BENCH_COMPARE_DIST) or `after` (this run's build). */
  name: 'before' | 'after';
  dist: string;
}

/** The rows of one build on one provider, named `<build>:<provider>:<row>` and labelled `<build> <row>`. */
async function rowsOf(ctx: RunContext, build: Build, provider: Provider): Promise<Target[]> {
  const { db, keys } = await mixedDatabase(ctx, provider, build.dist);
  const server = await appServer(`compare-${build.name}-${provider}`, db, {
    redis: provider === 'postgres',
    serverDist: build.dist,
  });
  const kind = provider;
  const label = provider === 'sqlite' ? 'SQLite+memory' : 'Postgres+Redis';
  const rows: Target[] = [
    { name: 'list', label: `${label} list (limit 20)`, kind, server, requests: [list(db.key)] },
    { name: 'get', label: `${label} get by id`, kind, server, requests: [get(db.key)] },
    { name: 'create', label: `${label} create`, kind, server, requests: [create(db.key)] },
    ...variedTargets(provider, server, keys),
  ];
  return rows.map((t) => ({ ...t, name: `${build.name}:${provider}:${t.name}`, label: `${build.name} ${t.label}` }));
}

function print(out: Out, rows: Target[], m: Map<string, Summary>, dists: Record<Build['name'], string>): void {
  const plain = m.get('floor-plain')!.cpuUs;
  out(`\nBefore and after, in the same alternating rounds (server CPU per answer; vs plain floor per CPU-second):`);
  out(`before: ${dists.before}\nafter:  ${dists.after}\n`);
  out(
    table(
      ['scenario', 'before CPU/req', 'after CPU/req', 'after/before', 'before vs plain', 'after vs plain', 'req/s'],
      rows.map((t) => {
        const [b, a] = [m.get(`before:${t.name}`)!, m.get(`after:${t.name}`)!];
        return [
          t.label,
          `${b.cpuUs.toFixed(0)} µs`,
          `${a.cpuUs.toFixed(0)} µs`,
          fmtRatio(a.cpuUs / b.cpuUs),
          fmtRatio(plain / b.cpuUs),
          fmtRatio(plain / a.cpuUs),
          `${fmtInt(b.rps)} -> ${fmtInt(a.rps)}` +
            (a.failures + b.failures ? ` (!${a.failures + b.failures} failed)` : ''),
        ];
      }),
    ),
  );
}

export const compare: Scenario = {
  name: 'compare',
  description: 'this build against BENCH_COMPARE_DIST (another build) in the same rounds: a before/after',
  alone: true,
  optIn: true,
  async run(ctx) {
    const before = COMPARE_DIST;
    if (!before) throw new Error('compare: BENCH_COMPARE_DIST must name another build (<worktree>/apps/server/dist)');
    console.log(`\nbefore/after (closed loop): ${before} against ${SERVER_DIST}`);
    const builds: Build[] = [
      { name: 'before', dist: before },
      { name: 'after', dist: SERVER_DIST },
    ];
    const perBuild: Target[] = [];
    for (const build of builds)
      for (const provider of ['sqlite', 'postgres'] as const) perBuild.push(...(await rowsOf(ctx, build, provider)));
    const targets = [...(await floorTargets('compare')), ...perBuild];
    const measured = await measure(targets);
    for (const t of targets) await t.server.stop();
    // One row per scenario: the `after` targets name them (`after:<provider>:<row>` without the build).
    const rows = perBuild
      .filter((t) => t.name.startsWith('after:'))
      .map((t) => ({ ...t, name: t.name.slice('after:'.length), label: t.label.slice('after '.length) }));
    const json = rows.map((t) => ({
      label: t.label,
      before: measured.get(`before:${t.name}`),
      after: measured.get(`after:${t.name}`),
    }));
    return {
      json: {
        compare: { before, after: SERVER_DIST, floorPlain: measured.get('floor-plain'), rows: json },
      },
      print: (out) => print(out, rows, measured, { before, after: SERVER_DIST }),
    };
  },
};
