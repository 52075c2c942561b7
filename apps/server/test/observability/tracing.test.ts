/**
 * Traces as an operator sees them: two replicas (two processes of the built server) on PostgreSQL and Redis export to
 * a real OTLP/HTTP receiver, one in protobuf and one in JSON. The caller's trace is continued, each request is one
 * SERVER span by the HTTP conventions with its key lookup, rate-limit decision (and its Redis command) and database
 * work beneath, shared work (a coalesced page query, a group commit) is one span linked to every request it served,
 * and no secret is anywhere in what was exported.
 */
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '@animal-store/test-services';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createKey, type MainProcess, startMain, startMains } from '../main-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const ADMIN_TOKEN = `admin-${randomBytes(24).toString('hex')}`;
const PET_NAME = `Secret-body-${randomBytes(4).toString('hex')}`;
const PARALLEL = 16;

let receiver: OtlpReceiver;
let database: TestDatabase;
let replicas: MainProcess[] = [];
let key: string;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  database = await createTestDatabase('postgresql');
  const env = { DATABASE_URL: database.target.url, REDIS_URL, ADMIN_TOKEN };
  key = createKey(env);
  const tracing = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100' };
  replicas = await startMains(
    (['http/protobuf', 'http/json'] as const).map((protocol) => ({
      ...env,
      ...tracing,
      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    })),
  );
}, 60_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.kill()));
  await receiver?.close();
  await database?.drop();
});

/** A caller's sampled span context, as the client package (or any instrumented app) sends it. */
function caller() {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, headers: { traceparent: `00-${traceId}-${spanId}-01`, tracestate: 'caller=1' } };
}

const inTrace = (spans: ReceivedSpan[], traceId: string) => spans.filter((s) => s.traceId === traceId);
const linkedFrom = (spans: ReceivedSpan[], traceId: string) =>
  spans.filter((s) => s.links.some((link) => link.traceId === traceId));

it('follows a create and a list across two replicas, from the caller to SQL and Redis', async () => {
  const [writer, reader] = replicas as [MainProcess, MainProcess];
  const auth = { Authorization: `Bearer ${key}` };
  const creates = Array.from({ length: PARALLEL }, caller);
  const lists = Array.from({ length: PARALLEL }, caller);
  // Creates on one replica at once (a group commit serves several), lists on the other (one query serves several).
  const created = await Promise.all(
    creates.map((c, i) =>
      fetch(`${writer.url}/v1/pets`, {
        method: 'POST',
        headers: { ...auth, ...c.headers, 'Content-Type': 'application/json', 'Idempotency-Key': `k-${i}` },
        body: JSON.stringify({ name: PET_NAME, categoryId: 1, status: 'available' }),
      }),
    ),
  );
  expect(created.map((r) => r.status)).toEqual(Array(PARALLEL).fill(201));
  const listed = await Promise.all(
    // A forwarded-for address from a proxy TRUST_PROXY does not trust (none, by default) is not the client's.
    lists.map((c, i) =>
      fetch(`${reader.url}/v1/pets?limit=${5 + i}`, {
        headers: { ...auth, ...c.headers, 'X-Forwarded-For': '203.0.113.9' },
      }),
    ),
  );
  expect(listed.map((r) => r.status)).toEqual(Array(PARALLEL).fill(200));
  // The admin token goes over the wire too: it must not reach a span either.
  const admin = await fetch(`${writer.url}/admin/v1/keys`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(admin.status).toBe(200);

  const every = [...creates, ...lists].map((c) => c.traceId);
  const spans = await receiver.waitFor(
    (all) =>
      every.every((t) => all.some((s) => s.traceId === t && s.kind === 'server')) &&
      every.every((t) => linkedFrom(all, t).length > 0),
    30_000,
  );

  // The create: the caller's trace continued, by the conventions, with its key lookup, limiter and idempotency check.
  const create = creates[0]!;
  const server = inTrace(spans, create.traceId).find((s) => s.kind === 'server')!;
  expect(server.parentSpanId).toBe(create.spanId);
  expect(server.traceState).toBe('caller=1');
  expect(server.name).toBe('POST /v1/pets');
  expect(server.attributes).toMatchObject({
    'http.request.method': 'POST',
    'http.route': '/v1/pets',
    'http.response.status_code': 201,
    'url.path': '/v1/pets',
    'url.scheme': 'http',
    'server.address': '127.0.0.1',
    'server.port': writer.port,
    'client.address': '127.0.0.1',
  });
  const createSpans = inTrace(spans, create.traceId);
  const names = createSpans.map((s) => s.name);
  expect(names).toEqual(expect.arrayContaining(['api_key lookup', 'rate_limit', 'EVALSHA', 'idempotency check']));
  const evalsha = createSpans.find((s) => s.name === 'EVALSHA')!;
  expect(evalsha.kind).toBe('client');
  expect(evalsha.attributes).toMatchObject({
    'db.system.name': 'redis',
    'db.operation.name': 'EVALSHA',
    'server.address': '127.0.0.1',
    'server.port': Number(new URL(REDIS_URL).port || 6379),
  });
  const decision = createSpans.find((s) => s.spanId === evalsha.parentSpanId)!;
  expect(decision.name).toBe('rate_limit');
  // Described once Redis answered (the store's promise settled inside the span).
  expect(decision.attributes).toMatchObject({
    'animal_store.rate_limit.store': 'redis',
    'animal_store.rate_limit.outcome': 'allowed',
  });

  // The group commit: one INSERT span per batch, linked to every create it committed; some served several.
  const commits = spans.filter((s) => s.name === 'INSERT pets');
  for (const c of creates) expect(linkedFrom(commits, c.traceId)).toHaveLength(1);
  expect(commits.length).toBeLessThan(PARALLEL);
  expect(Math.max(...commits.map((s) => s.links.length))).toBeGreaterThan(1);
  expect(commits[0]!.attributes).toMatchObject({
    'db.system.name': 'postgresql',
    'db.operation.name': 'INSERT',
    'db.collection.name': 'pets',
    'db.namespace': new URL(database.target.url).pathname.slice(1),
  });
  expect(String(commits[0]!.attributes['db.query.text'])).toMatch(/INSERT INTO "Pet"/);

  // The list on the other replica: its SELECT is shared with the lists read with it.
  const list = lists[0]!;
  const listServer = inTrace(spans, list.traceId).find((s) => s.kind === 'server')!;
  expect(listServer.parentSpanId).toBe(list.spanId);
  expect(listServer.attributes).toMatchObject({
    'http.route': '/v1/pets',
    'http.response.status_code': 200,
    'client.address': '127.0.0.1',
  });
  const reads = spans.filter((s) => s.name === 'SELECT pets' && s.attributes['db.system.name'] === 'postgresql');
  for (const l of lists) expect(linkedFrom(reads, l.traceId)).toHaveLength(1);
  expect(Math.max(...reads.map((s) => s.links.length))).toBeGreaterThan(1);

  // Prisma's own spans where Prisma runs: the first lookup of the key on each replica.
  expect(spans.some((s) => s.name.startsWith('prisma:client:') && s.attributes['db.query.text'] !== undefined)).toBe(
    true,
  );
  // Both replicas exported, each its own instance.
  expect(new Set(spans.map((s) => s.resource['service.instance.id'])).size).toBe(2);
  // Counted by service name as received, in both encodings (what a bench reads when it keeps no span).
  const received = receiver.spans();
  expect(receiver.counts()).toEqual({ 'animal-store': received.length });
  expect(new Set(receiver.payloads().map((p) => p.contentType))).toEqual(
    new Set(['application/x-protobuf', 'application/json']),
  );

  // The request's log line carries its trace.
  const line = writer.logs().find((l) => l.msg === 'request' && l.trace_id === create.traceId);
  expect(line?.span_id).toBe(server.spanId);

  // Nothing secret anywhere in what was exported: not the key, not the admin token, no Authorization header, no body.
  const exported = receiver
    .payloads()
    .map((p) => p.body.toString('latin1'))
    .join('\n');
  expect(exported).toContain('POST /v1/pets');
  for (const secret of [key, ADMIN_TOKEN, PET_NAME]) expect(exported).not.toContain(secret);
  expect(exported.toLowerCase()).not.toContain('authorization');
}, 90_000);

it("records Prisma's spans only inside a sampled request, never as traces of their own", async () => {
  // Roots sampled always, so a Prisma query outside any sampled span would be exported as a trace of its own; the
  // requests carry an unsampled parent (flags 00), which the parent-based sampler follows.
  const service = 'animal-store-unsampled';
  const env = { DATABASE_URL: database.target.url, REDIS_URL, ADMIN_TOKEN };
  const replica = await startMain({
    ...env,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: '100',
    OTEL_SERVICE_NAME: service,
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '1',
  });
  try {
    // Keys made after the start: each one's first request looks it up through Prisma.
    for (const fresh of [createKey(env), createKey(env)]) {
      const unsampled = caller();
      const headers = {
        Authorization: `Bearer ${fresh}`,
        traceparent: unsampled.headers.traceparent.replace(/01$/, '00'),
      };
      for (let i = 0; i < 3; i++) expect((await fetch(`${replica.url}/v1/pets?limit=1`, { headers })).status).toBe(200);
    }
    // The control: a sampled caller with a fresh key, whose trace holds Prisma's spans of its lookup.
    const sampled = caller();
    const headers = { Authorization: `Bearer ${createKey(env)}`, ...sampled.headers };
    expect((await fetch(`${replica.url}/v1/pets?limit=1`, { headers })).status).toBe(200);
    const ofService = (spans: ReceivedSpan[]) => spans.filter((s) => s.resource['service.name'] === service);
    await receiver.waitFor((all) =>
      ofService(all).some((s) => s.traceId === sampled.traceId && s.name.startsWith('prisma:client:')),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const exported = ofService(receiver.spans());
    expect(exported.filter((s) => s.traceId !== sampled.traceId).map((s) => `${s.traceId} ${s.name}`)).toEqual([]);
  } finally {
    await replica.kill();
  }
}, 60_000);

it('keeps a create in its trace when the body arrives after the headers', async () => {
  // The body's end is a socket event of its own, outside the request's context; what the handler does after it (the
  // idempotency check, the group commit) must still be in the request's trace.
  const [writer] = replicas as [MainProcess];
  const sampled = caller();
  const body = JSON.stringify({ name: PET_NAME, categoryId: 1, status: 'available' });
  const head = [
    'POST /v1/pets HTTP/1.1',
    `Host: 127.0.0.1:${writer.port}`,
    `Authorization: Bearer ${key}`,
    `traceparent: ${sampled.headers.traceparent}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Idempotency-Key: late-body',
    'Connection: close',
  ].join('\r\n');
  const socket = connect(writer.port, '127.0.0.1');
  const answer = new Promise<string>((resolve, reject) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
  socket.write(`${head}\r\n\r\n`);
  await new Promise((resolve) => setTimeout(resolve, 200));
  socket.write(body);
  expect((await answer).split('\r\n')[0]).toBe('HTTP/1.1 201 Created');

  const spans = await receiver.waitFor((all) => linkedFrom(all, sampled.traceId).length > 0, 30_000);
  const mine = inTrace(spans, sampled.traceId);
  const server = mine.find((s) => s.kind === 'server')!;
  const check = mine.find((s) => s.name === 'idempotency check');
  expect(check?.parentSpanId).toBe(server.spanId);
  expect(linkedFrom(spans, sampled.traceId).map((s) => s.name)).toEqual(['INSERT pets']);
}, 60_000);
