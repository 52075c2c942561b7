/**
 * Overload (issue #25 §4): on SQLite + memory and on PostgreSQL + Redis, a server with load shedding on and one with it
 * off; the capacity measured on the one without (the highest open-loop rate served within a latency bound,
 * overload-capacity.ts), then offered load at 0.5x, 1x, 2x and 4x of it in an open loop (overload-steps.ts), and 0.5x
 * while one Free key holds 500 requests in flight. The server runs on CPU 0 and the load generators on CPU 1 (as the
 * issue's operator ran them). Keys are cached on every server before anything is measured (KEY_CACHE_TTL_MS 600 s,
 * every key sent until a pass is answered 2xx throughout), so a step's cost does not depend on how often thousands of
 * keys come round; each server then carries the crowd's reads at the capacity for a while before its first step
 * (warmLoad), so both are judged warm. SQLite's page and pet caches are off, so every list reads its rows. The
 * capacity search sends on keys of its own. Bare node:http's cost per answer is measured in the same run, the floor of
 * any refusal. Judged by the targets (shedding on).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '@animal-store/test-services';
import { appServer, NO_PAGE_CACHE } from '../bench-servers.js';
import { postgresDatabase, sqliteDatabase, type BenchDatabase } from '../databases.js';
import { moreKeys } from '../more-keys.js';
import { CAPACITY_GIVEN, overloadTable, overloadTargets, stepLine, type SetupReport } from '../overload-report.js';
import { bareAnswerMicros, capacity, CAPACITY_P99_MS, CAPACITY_SERVED } from '../overload-capacity.js';
import {
  pin,
  step,
  warmKeys,
  warmLoad,
  type OverloadServer,
  type StepResult,
  type Traffic,
} from '../overload-steps.js';
import { CATALOGUE_SIZE } from '../page.js';
import { cpuMs, mainThreadWakeups } from '../servers.js';
import type { RunContext, Scenario } from '../scenario.js';
import { settings } from '../settings.js';

/** Offered load, in capacity measured in the same run. */
export const FACTORS = [0.5, 1, 2, 4];

interface Setup {
  name: string;
  label: string;
  redis: boolean;
  database(): Promise<BenchDatabase>;
}

const SETUPS: Setup[] = [
  { name: 'sqlite', label: 'SQLite + memory', redis: false, database: () => sqliteDatabase(CATALOGUE_SIZE) },
  { name: 'postgres', label: 'PostgreSQL + Redis', redis: true, database: () => postgresDatabase(CATALOGUE_SIZE) },
];

async function overloadServer(name: string, db: BenchDatabase, redis: boolean, shedding: boolean) {
  const opsPort = await freePort();
  const env = {
    LOAD_SHEDDING: String(shedding),
    OPS_PORT: String(opsPort),
    KEY_CACHE_TTL_MS: '600000',
    ...NO_PAGE_CACHE,
    PET_CACHE_ENTRIES: '0',
  };
  const server = await appServer(`overload-${name}-${shedding ? 'on' : 'off'}`, db, { redis, env });
  pin(server.pid, 'server');
  return { server, opsOrigin: `http://127.0.0.1:${opsPort}`, shedding } satisfies OverloadServer;
}

/** Seconds both servers are left idle, side by side, for what each costs when nothing comes (after IDLE_SETTLE_SECONDS). */
const IDLE_SECONDS = 20;
/** Seconds first left unmeasured: V8 collects a heap that just stopped growing (the key warm-up's) a few times. */
const IDLE_SETTLE_SECONDS = 5;

/** Each server's CPU (ms a second) and main-thread wake-ups (a second) over IDLE_SECONDS with no traffic. */
async function idleCost(on: OverloadServer, off: OverloadServer): Promise<SetupReport['idle']> {
  const read = ({ server }: OverloadServer) => ({ cpuMs: cpuMs(server.pid), wakeups: mainThreadWakeups(server.pid) });
  const rate = (s: OverloadServer, from: ReturnType<typeof read>) => {
    const now = read(s);
    return { cpuMs: (now.cpuMs - from.cpuMs) / IDLE_SECONDS, wakeups: (now.wakeups - from.wakeups) / IDLE_SECONDS };
  };
  await sleep(IDLE_SETTLE_SECONDS * 1000);
  const [onFrom, offFrom] = [read(on), read(off)];
  await sleep(IDLE_SECONDS * 1000);
  return { on: rate(on, onFrom), off: rate(off, offFrom) };
}

/** True unless BENCH_OVERLOAD_ONLY names a subset without `part` among parts of its kind. */
const chosen = (part: string, kind: readonly string[]): boolean => {
  const only = settings.overloadOnly?.filter((p) => kind.includes(p));
  return only === undefined || only.length === 0 || only.includes(part);
};
const STEP_NAMES = [...FACTORS.map(String), 'noisy'];

/** The steps of one server, after its warm-up load: the trickle alone (shedding on only), the ladder, the noisy key. */
async function ladder(s: OverloadServer, traffic: Traffic, cap: number, label: string): Promise<StepResult[]> {
  const steps: StepResult[] = [];
  if (!chosen(s.shedding ? 'on' : 'off', ['on', 'off'])) return steps;
  await warmLoad(s, traffic.free, cap);
  const run = async (factor: number, noisy = false) => {
    if (factor > 0 && !chosen(noisy ? 'noisy' : String(factor), STEP_NAMES)) return;
    const result = await step(s, traffic, cap, factor, noisy);
    console.log(stepLine(`${label}, shedding ${s.shedding ? 'on' : 'off'}`, result));
    steps.push(result);
  };
  if (s.shedding) await run(0);
  for (const factor of FACTORS) await run(factor);
  await run(0.5, true);
  return steps;
}

async function measureSetup(ctx: RunContext, setup: Setup): Promise<SetupReport> {
  const db = ctx.track(await setup.database());
  const n = settings.overloadKeys;
  const keys = await moreKeys(db.url, 2 * n + 2, 'free');
  const [free, searched] = [keys.slice(0, n), keys.slice(n, 2 * n)];
  const off = await overloadServer(setup.name, db, setup.redis, false);
  const on = await overloadServer(setup.name, db, setup.redis, true);
  try {
    // The capacity search sends on keys of its own: its probes take a crowd key up to Free's 60 a minute, and the
    // refusals past it end in bans (in Redis, shared by both servers) that would refuse the steps' requests. The
    // crowd's keys are cached after it, in place of the search's (the key cache holds 10,000).
    const given = settings.overloadCapacity;
    if (given === undefined) await warmKeys(off, searched);
    const found =
      given === undefined
        ? await capacity(off, { free: searched, enterprise: db.key, noisy: '' })
        : { rps: given, closedRps: undefined, probes: [] };
    await warmKeys(off, free);
    await warmKeys(on, free);
    const idle = await idleCost(on, off);
    const bareAnswerUs = await bareAnswerMicros({ free, enterprise: db.key, noisy: '' }, FACTORS.at(-1)! * found.rps);
    const cap = found.rps;
    const perKey = (FACTORS.at(-1)! * cap) / free.length;
    const tried = found.probes.map((p) => `${p.rate}${p.served ? '' : ' (not served)'}`).join(', ');
    const how =
      found.closedRps === undefined
        ? CAPACITY_GIVEN
        : `open loop, >= ${CAPACITY_SERVED * 100} % served with p99 <= ${CAPACITY_P99_MS} ms; tried ${tried}; closed loop of ${settings.connections} connections ${Math.round(found.closedRps)}`;
    console.log(
      `  ${setup.label}: capacity ${cap} req/s (${how}); the crowd's keys send up to ${perKey.toFixed(2)} req/s each`,
    );
    const onSteps = await ladder(on, { free, enterprise: db.key, noisy: keys.at(-1)! }, cap, setup.label);
    const offSteps = await ladder(off, { free, enterprise: db.key, noisy: keys.at(-2)! }, cap, setup.label);
    return {
      name: setup.name,
      label: setup.label,
      capacity: cap,
      closedCapacity: found.closedRps,
      bareAnswerUs,
      idle,
      on: onSteps,
      off: offSteps,
    };
  } finally {
    await Promise.all([on.server.stop(), off.server.stop()]);
  }
}

export const overload: Scenario = {
  name: 'overload',
  description:
    'open loop at 0.5x-4x of the measured capacity, shedding on and off: goodput, shed share by plan, admitted p99, /healthz',
  alone: true,
  async run(ctx) {
    console.log(
      `\noverload: ${settings.overloadKeys} Free keys and an Enterprise trickle, open loop, ${settings.overloadStepSeconds} s steps ...`,
    );
    const reports: SetupReport[] = [];
    pin(process.pid, 'load');
    try {
      for (const setup of SETUPS)
        if (chosen(setup.name, ['sqlite', 'postgres'])) reports.push(await measureSetup(ctx, setup));
    } finally {
      pin(process.pid, 'all');
    }
    return {
      json: { overload: reports },
      print(out) {
        for (const r of reports) out(overloadTable(r));
      },
      targets: reports.flatMap(overloadTargets),
    };
  },
};
