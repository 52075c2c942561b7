/**
 * `--profile <server> [operation]`: one server under `node --cpu-prof` for BENCH_PROFILE_SECONDS (10) of closed-loop
 * load, then its top self-time functions and the self time per package (cpuprofile-top.ts).
 *   server: sqlite | postgres | floor | ceiling; operation: list | get | create | varied | mixed (the mixed workload's
 *   pages, without and with 10 % creates).
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { appServer, baselineServer } from './bench-servers.js';
import { printTop } from './cpuprofile-top.js';
import { postgresDatabase, sqliteDatabase, type BenchDatabase } from './databases.js';
import { load } from './load-client.js';
import type { LoadRequest, MixSpec } from './load-spec.js';
import { pin } from './overload-steps.js';
import { CATALOGUE_SIZE } from './page.js';
import { RESULTS } from './paths.js';
import { CANNED, create, get, list } from './requests.js';
import type { Run } from './run.js';
import type { RunningServer } from './servers.js';
import { settings } from './settings.js';
import { fmtInt, fmtMs } from './stats.js';

const isBaseline = (provider: string): provider is 'floor' | 'ceiling' =>
  provider === 'floor' || provider === 'ceiling';

function requestsFor(op: string, key: string): LoadRequest[] {
  if (op === 'create') return [create(key)];
  if (op === 'get') return [get(key)];
  return [list(key)];
}

async function profiledServer(run: Run, provider: string, dir: string): Promise<[RunningServer, BenchDatabase?]> {
  const prof = ['--cpu-prof', `--cpu-prof-dir=${dir}`];
  if (isBaseline(provider)) return [await baselineServer(provider, provider, {}, prof)];
  const db = run.track(await (provider === 'postgres' ? postgresDatabase : sqliteDatabase)(CATALOGUE_SIZE));
  return [await appServer(`profile-${provider}`, db, { redis: provider === 'postgres', nodeArgs: prof }), db];
}

export async function profile(run: Run, provider: string, op: string): Promise<void> {
  const dir = join(RESULTS, 'profiles');
  mkdirSync(dir, { recursive: true });
  const before = new Set(readdirSync(dir));
  const [server, db] = await profiledServer(run, provider, dir);
  // As the measuring scenarios do: the server alone on CPU 0, the load elsewhere, so the load generator never takes
  // the profiled server's CPU (the scheduler otherwise places both as it likes).
  pin(server.pid, 'server');
  pin(process.pid, 'load');
  const mix: MixSpec | undefined =
    db && (op === 'varied' || op === 'mixed')
      ? { keys: [db.key], createPercent: op === 'mixed' ? 10 : 0, maxId: CATALOGUE_SIZE }
      : undefined;
  const res = await load({
    mode: 'closed',
    origin: server.origin,
    requests: db ? requestsFor(op, db.key) : [CANNED],
    ...(mix ? { mix } : {}),
    connections: settings.connections,
    durationSec: settings.profileSeconds,
  });
  console.log(
    `profile ${provider} ${op}: ${fmtInt(res.rps)} req/s under --cpu-prof, p50 ${fmtMs(res.p50)}, non-2xx ${res.non2xx}`,
  );
  pin(process.pid, 'all');
  await server.stop(); // the profile is written when the process exits
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile') && !before.has(f));
  if (!file) throw new Error('no .cpuprofile written');
  printTop(join(dir, file), settings.profileTop);
}
