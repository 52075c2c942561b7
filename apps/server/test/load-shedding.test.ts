// Load shedding over HTTP (issue #25 §2): the level set by hand through the monitor's own step (no timer, no load), so
// each decision is exact; what the gate answers, in which order plans go, and that nothing it sheds reaches a key lookup.
import { DEFAULTS } from '../src/config/defaults.js';
import { PRIORITY_STALE_MS } from '../src/keys/resolver.js';
import { createOverload, type Overload } from '../src/overload/overload.js';
import { SOFT_CEILING, type SaturationSignals } from '../src/overload/pressure.js';
import { Metrics } from '../src/telemetry/metrics.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  auth,
  createTestDatabase,
  expectError,
  jsonPost,
  PROVIDERS,
  silentLogger,
  startTestServer,
  type TestDatabase,
  type TestServer,
} from './helpers.js';
import { startMain } from './main-process.js';

const ADMIN_TOKEN = 'admin-token-for-tests-0123456789abcdef';
const calm: SaturationSignals = { eventLoopDelayMs: 0, eventLoopUtilization: 0.2, inFlight: 0, dbWaiting: 0 };

/**
 * Steps the monitor until its level reaches `level` or more (a loop late with requests of its own, as many in flight
 * as the controller wants before it calls the load its own), or falls back to 0 (calm). Up to SOFT_CEILING the delay
 * stands a little past its target, so the share shed climbs in small steps; above it, past the hard threshold.
 */
function driveTo(overload: Overload, level: number): void {
  const { monitor } = overload;
  const { thresholds } = DEFAULTS.loadShedding;
  const delay = level > SOFT_CEILING ? 2 * thresholds.eventLoopDelayMs : 1.25 * thresholds.targetDelayMs;
  const late = { ...calm, eventLoopDelayMs: delay, inFlight: thresholds.minInFlight };
  for (let i = 0; i < 1000 && monitor.level < level; i++) monitor.sample(late);
}
function calmDown(overload: Overload): void {
  for (let i = 0; i < 1000 && overload.monitor.level > 0; i++) overload.monitor.sample(calm);
}

/** A metric's value in the exposition (the sum over its series matching `labels`). */
async function metric(server: TestServer, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) && line.includes(labels))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

/** The real app on a new database of `provider`, with load shedding whose level a test sets (driveTo, calmDown). */
async function sheddingServer(
  provider: (typeof PROVIDERS)[number],
  deps: Parameters<typeof startTestServer>[1],
): Promise<{ database: TestDatabase; server: TestServer; overload: Overload }> {
  const database = await createTestDatabase(provider);
  const metrics = new Metrics();
  const overload = createOverload(DEFAULTS.loadShedding, { registry: metrics.registry, db: {}, logger: silentLogger });
  const server = await startTestServer(
    database.target,
    { metrics, overload, ...deps },
    { admission: overload.admission },
  );
  return { database, server, overload };
}

describe.each(PROVIDERS)('load shedding on %s', (provider) => {
  let database: TestDatabase;
  let server: TestServer;
  let overload: Overload;
  const keys: Record<string, string> = {};
  beforeAll(async () => {
    ({ database, server, overload } = await sheddingServer(provider, {
      adminToken: ADMIN_TOKEN,
      keyCacheTtlMs: 600_000,
    }));
    keys.free = await server.key('free');
    keys.pro = await server.key('pro');
    keys.enterprise = await server.key('enterprise', { perMinute: 1000, perDay: 10_000 });
    // Each key looked up once: from now on the gate knows its plan from the key cache.
    for (const key of Object.values(keys))
      expect((await fetch(`${server.url}/v1/pets`, { headers: auth(key) })).status).toBe(200);
  });
  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  it('answers a shed request 503 service_unavailable with Retry-After and counts it by signal and plan', async () => {
    driveTo(overload, 2); // no key and free shed, pro not yet
    const shed = await fetch(`${server.url}/v1/pets`, { headers: auth(keys.free!) });
    await expectError(shed, 503, 'service_unavailable', 'overloaded');
    expect(shed.headers.get('retry-after')).toBe('1');
    expect((await fetch(`${server.url}/v1/pets`, { headers: auth(keys.pro!) })).status).toBe(200);
    expect((await fetch(`${server.url}/v1/pets`)).status).toBe(503);
    expect(await metric(server, 'animal_store_load_shed_total', 'plan="free"')).toBeGreaterThanOrEqual(1);
    expect(await metric(server, 'animal_store_load_shed_total', 'plan="none"')).toBeGreaterThanOrEqual(1);
    expect(await metric(server, 'animal_store_load_shed_total', 'reason="event_loop_delay"')).toBeGreaterThanOrEqual(2);
    calmDown(overload);
  });

  it('sheds plans in order as the level rises, Enterprise last, creates after reads', async () => {
    const status = async (key: string, create = false) =>
      (
        await fetch(
          `${server.url}/v1/pets`,
          create ? jsonPost(key, { name: 'Rex', categoryId: 1 }) : { headers: auth(key) },
        )
      ).status;
    driveTo(overload, 3.6); // pro reads and creates shed (with the traffic seen, the share reaches 3.6 at 4); enterprise not
    expect(await status(keys.pro!)).toBe(503);
    expect(await status(keys.pro!, true)).toBe(503);
    expect(await status(keys.enterprise!)).toBe(200);
    expect(await status(keys.enterprise!, true)).toBe(201);
    driveTo(overload, 5); // enterprise reads shed, enterprise creates half
    expect(await status(keys.enterprise!)).toBe(503);
    calmDown(overload);
    expect(await status(keys.free!)).toBe(200);
  });

  it('never sheds /healthz, /readyz, /metrics or the admin API', async () => {
    driveTo(overload, 99);
    for (const path of ['/healthz', '/readyz', '/metrics'])
      expect((await fetch(`${server.url}${path}`)).status).toBe(200);
    expect((await fetch(`${server.url}/admin/v1/keys`, { headers: auth(ADMIN_TOKEN) })).status).toBe(200);
    calmDown(overload);
  });

  it('at the hard level sheds before any key lookup: an unknown key costs no lookup', async () => {
    const lookups = () => metric(server, 'animal_store_api_key_lookups_total', 'result="miss"');
    const before = await lookups();
    driveTo(overload, 99);
    const fresh = await server.key('enterprise', { perMinute: 1000, perDay: 10_000 });
    await expectError(await fetch(`${server.url}/v1/pets`, { headers: auth(fresh) }), 503, 'service_unavailable');
    expect(await lookups()).toBe(before);
    expect(await metric(server, 'animal_store_load_shed_total', 'plan="unknown"')).toBeGreaterThanOrEqual(1);
    calmDown(overload);
    // Below the hard level a key the cache does not hold is looked up, then decided by its plan.
    driveTo(overload, 2);
    expect((await fetch(`${server.url}/v1/pets`, { headers: auth(fresh) })).status).toBe(200);
    expect(await lookups()).toBe(before + 1);
    const freeKey = await server.key('free');
    expect((await fetch(`${server.url}/v1/pets`, { headers: auth(freeKey) })).status).toBe(503);
    calmDown(overload);
  });
});

describe.each(PROVIDERS)('load shedding past the key cache TTL on %s', (provider) => {
  let database: TestDatabase;
  let server: TestServer;
  let overload: Overload;
  let clock = 1_000_000_000;
  beforeAll(async () => {
    ({ database, server, overload } = await sheddingServer(provider, { keyCacheTtlMs: 5000, now: () => clock }));
  });
  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  it("sheds a key by the plan of its expired lookup, with no lookup again; a lookup older than the bound doesn't count", async () => {
    const lookups = () => metric(server, 'animal_store_api_key_lookups_total', 'result="miss"');
    const list = (key: string) => fetch(`${server.url}/v1/pets`, { headers: auth(key) });
    const free = await server.key('free');
    const enterprise = await server.key('enterprise', { perMinute: 1000, perDay: 10_000 });
    for (const key of [free, enterprise]) expect((await list(key)).status).toBe(200);
    const before = await lookups();
    clock += 6000; // both lookups past the 5 s TTL
    driveTo(overload, 2); // no key and Free shed
    await expectError(await list(free), 503, 'service_unavailable');
    expect(await lookups()).toBe(before);
    expect(await metric(server, 'animal_store_load_shed_total', 'plan="free"')).toBeGreaterThanOrEqual(1);
    // Let in by its plan, an Enterprise key is looked up afresh before it is served.
    expect((await list(enterprise)).status).toBe(200);
    expect(await lookups()).toBe(before + 1);
    // Past the bound, the plan is not known without a lookup: the key is looked up, then shed by the plan found.
    clock += PRIORITY_STALE_MS;
    await expectError(await list(free), 503, 'service_unavailable');
    expect(await lookups()).toBe(before + 2);
    calmDown(overload);
    expect((await list(free)).status).toBe(200);
  });
});

describe('the process (dist/main.js)', () => {
  it('serves /healthz, /readyz and /metrics on OPS_PORT, and nothing else there', async () => {
    const database = await createTestDatabase('sqlite');
    const { freePort } = await import('@animal-store/rate-limit/testing');
    const opsPort = await freePort();
    const main = await startMain({ DATABASE_URL: database.target.url, OPS_PORT: String(opsPort) });
    try {
      const ops = `http://127.0.0.1:${opsPort}`;
      for (const path of ['/healthz', '/readyz', '/metrics']) expect((await fetch(`${ops}${path}`)).status).toBe(200);
      expect(await (await fetch(`${ops}/metrics`)).text()).toContain('animal_store_load_shed_level');
      await expectError(await fetch(`${ops}/v1/pets`), 404, 'not_found');
      expect((await fetch(`${main.url}/healthz`)).status).toBe(200);
    } finally {
      await main.kill();
      await database.drop();
    }
  });
});
