// The door (issue #25): a key already over its limits is refused before its key lookup, without a charge, and its
// refusals are held, so a closed loop cannot spin the process. Holds are long here and released by hand: no timing.
import { PLAN_LIMITS } from '@animal-store/contract';
import { createMemoryStore } from '@animal-store/rate-limit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULTS } from '../src/config/defaults.js';
import { createOverload, type Overload } from '../src/overload/overload.js';
import { Metrics } from '../src/telemetry/metrics.js';
import {
  auth,
  createTestDatabase,
  eventually,
  expectError,
  silentLogger,
  startTestServer,
  type TestDatabase,
  type TestServer,
} from './helpers.js';

/** A create whose body is still on its way: it holds a slot (taken before the body is read) until `finish`. */
function slowCreate(url: string, key: string) {
  let body!: ReadableStreamDefaultController<Uint8Array>;
  const stream = new ReadableStream<Uint8Array>({ start: (c) => void (body = c) });
  body.enqueue(new TextEncoder().encode('{"name":'));
  // duplex: a body streamed while the answer may already come (undici's requirement for a stream body).
  const init = { method: 'POST', headers: auth(key, { 'Content-Type': 'application/json' }), body: stream };
  const answer = fetch(`${url}/v1/pets`, { ...init, duplex: 'half' });
  return {
    async finish(): Promise<number> {
      body.enqueue(new TextEncoder().encode('"Slow","categoryId":1}'));
      body.close();
      return (await answer).status;
    },
  };
}

/** The value of one series of the exposition, named in full (0 while it has not been counted). */
async function series(server: TestServer, name: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}

/** The answer's length is sent (not chunked): a held refusal is written whole, in one go. */
async function expectLength(answer: Response): Promise<void> {
  const bytes = (await answer.clone().arrayBuffer()).byteLength;
  expect(answer.headers.get('transfer-encoding')).toBeNull();
  expect(answer.headers.get('content-length')).toBe(String(bytes));
}

describe('the door', () => {
  let database: TestDatabase;
  let server: TestServer;
  let overload: Overload;
  let now = Date.UTC(2026, 10, 24, 4, 0, 1);
  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    const metrics = new Metrics();
    // Held for a minute: every held refusal in these tests leaves only when a test releases it.
    const settings = { ...DEFAULTS.loadShedding, hold: { ms: 60_000, maxSockets: 2 } };
    overload = createOverload(settings, { registry: metrics.registry, db: {}, logger: silentLogger });
    server = await startTestServer(
      database.target,
      {
        metrics,
        overload,
        now: () => now,
        keyCacheTtlMs: 3_600_000,
        rateLimit: { store: createMemoryStore({ now: () => now }), banThreshold: 2, banSeconds: 600 },
      },
      { admission: overload.admission },
    );
  });
  afterAll(async () => {
    overload?.hold.release();
    await server?.close();
    await database?.drop();
  });

  it('refuses a key whose lineage has all its slots in flight, held, uncharged, with the rate-limit headers', async () => {
    const key = await server.key('free');
    const limit = PLAN_LIMITS.free.concurrentRequests;
    const held = Array.from({ length: limit }, () => slowCreate(server.url, key));
    const refusals = () => series(server, 'animal_store_concurrency_refusals_total{plan="free"}');
    await eventually(async () => (await refusals()) === 0 && overload.admission.inFlight >= limit);

    const refused = fetch(`${server.url}/v1/pets`, { headers: auth(key) });
    await eventually(() => overload.hold.held === 1);
    // A held refusal is no request in flight: one key's excess is not the process's load.
    expect(overload.admission.inFlight).toBe(limit);
    expect(await refusals()).toBe(1);
    overload.hold.release();
    const answer = await refused;
    await expectLength(answer);
    await expectError(answer, 429, 'concurrency_limit_exceeded', `${limit} at once`);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(answer.headers.get('x-ratelimit-limit')).toBe('60');
    const remaining = Number(answer.headers.get('x-ratelimit-remaining'));
    expect(remaining).toBe(60 - limit);

    // A slot frees: the door opens again, and the refusal was not charged.
    expect(await held[0]!.finish()).toBe(201);
    await eventually(() => overload.admission.inFlight < limit);
    const admitted = await fetch(`${server.url}/v1/pets`, { headers: auth(key) });
    expect(admitted.status).toBe(200);
    expect(Number(admitted.headers.get('x-ratelimit-remaining'))).toBe(remaining - 1);
    for (const h of held.slice(1)) expect(await h.finish()).toBe(201);
  });

  it('sends a refusal at once when the hold is full', async () => {
    const key = await server.key('free');
    const held = Array.from({ length: PLAN_LIMITS.free.concurrentRequests }, () => slowCreate(server.url, key));
    await eventually(() => overload.admission.inFlight >= PLAN_LIMITS.free.concurrentRequests);
    const first = [fetch(`${server.url}/v1/pets`, { headers: auth(key) })];
    first.push(fetch(`${server.url}/v1/pets`, { headers: auth(key) }));
    await eventually(() => overload.hold.held === 2);
    await expectError(await fetch(`${server.url}/v1/pets`, { headers: auth(key) }), 429, 'concurrency_limit_exceeded');
    expect(overload.hold.held).toBe(2);
    overload.hold.release();
    for (const answer of await Promise.all(first)) expect(answer.status).toBe(429);
    for (const h of held) expect(await h.finish()).toBe(201);
  });

  it('refuses a banned key until its ban ends, without asking the limiter, with the ban’s headers', async () => {
    const key = await server.key('enterprise', { perMinute: 2, perDay: 1000 });
    const codes: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${server.url}/v1/pets`, { headers: auth(key) });
      codes.push(res.ok ? String(res.status) : ((await res.json()) as { code: string }).code);
    }
    // Refusals past the threshold (2) ban the key.
    expect(codes).toEqual(['200', '200', 'rate_limit_exceeded', 'rate_limit_exceeded', 'api_key_banned']);
    const bans = () =>
      series(server, 'animal_store_rate_limit_refusals_total{reason="api_key_banned",plan="enterprise"}');
    const before = await bans();

    now += 120_000; // the minute has room again; the ban (600 s) holds
    const refused = fetch(`${server.url}/v1/pets`, { headers: auth(key) });
    await eventually(() => overload.hold.held === 1);
    expect(await bans()).toBe(before + 1);
    overload.hold.release();
    const answer = await refused;
    await expectLength(answer);
    await expectError(answer, 429, 'api_key_banned');
    expect(answer.headers.get('retry-after')).toBe(String(600 - 120));
    expect(answer.headers.get('x-ratelimit-remaining')).toBe('0');
    // The status of its limits is still answered, and once the ban is over the key is served.
    expect((await fetch(`${server.url}/v1/rate_limit`, { headers: auth(key) })).status).toBe(200);
    now += 600_000;
    expect((await fetch(`${server.url}/v1/pets`, { headers: auth(key) })).status).toBe(200);
  });
});
