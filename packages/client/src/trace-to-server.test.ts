/**
 * One connected trace from the app's call to the service's SQL and Redis work: the client, in an app with an SDK
 * registered, calls the real built server (SQLite, the Redis limiter), which exports its spans to an OTLP receiver.
 * Each attempt's CLIENT span is the parent of the server's SERVER span, and the key lookup, the limiter's Redis command
 * and the SQLite work sit beneath it, in the app's trace.
 */
import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '@animal-store/test-services';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAnimalStoreClient } from './index.js';
import { type RealServer, startRealServer } from './test-support/server.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
let receiver: OtlpReceiver;
let server: RealServer;

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  receiver = await startOtlpReceiver();
  server = await startRealServer({
    env: { REDIS_URL, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100' },
  });
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await receiver?.close();
  trace.disable();
  propagation.disable();
  context.disable();
});

/** Spans of the trace beneath `parentId`, at any depth. */
function beneath(spans: ReceivedSpan[], parentId: string): ReceivedSpan[] {
  const children = spans.filter((s) => s.parentSpanId === parentId);
  return children.flatMap((child) => [child, ...beneath(spans, child.spanId)]);
}

it("joins the app's trace: each call's attempt, the server's request, its Redis and SQL work", async () => {
  // Limits far above what tests on the shared Redis spend: a key's counters there are named by its id.
  const apiKey = await server.createKey('enterprise', ['--per-minute', '100000', '--per-day', '10000000']);
  const client = createAnimalStoreClient({ baseUrl: server.baseUrl, apiKey, retry: { maxRetries: 0 } });
  const app = await trace.getTracer('app').startActiveSpan('app work', async (span) => {
    expect((await client.createPet({ body: { name: 'Traced', categoryId: 3 } })).status).toBe(201);
    expect((await client.listPets({ query: { limit: 5 } })).status).toBe(200);
    span.end();
    return span.spanContext();
  });
  await provider.forceFlush();
  const attempts = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.CLIENT);
  expect(attempts.map((s) => s.name)).toEqual(['POST /v1/pets', 'GET /v1/pets']);

  const attemptIds = attempts.map((a) => a.spanContext().spanId);
  const spans = await receiver.waitFor((all) =>
    attemptIds.every((id) => all.some((s) => s.kind === 'server' && s.parentSpanId === id)),
  );
  const work = attempts.map((attempt) => {
    expect(attempt.spanContext().traceId).toBe(app.traceId);
    expect(attempt.parentSpanContext?.spanId).toBe(app.spanId);
    const request = spans.find((s) => s.kind === 'server' && s.parentSpanId === attempt.spanContext().spanId)!;
    expect(request.traceId).toBe(app.traceId);
    expect(request.name).toBe(attempt.name);
    return beneath(spans, request.spanId);
  });
  const [create, list] = work as [ReceivedSpan[], ReceivedSpan[]];
  for (const spansOf of [create, list]) {
    expect(spansOf.every((s) => s.traceId === app.traceId)).toBe(true);
    const evalsha = spansOf.find((s) => s.name === 'EVALSHA');
    expect(evalsha?.attributes).toMatchObject({
      'db.system.name': 'redis',
      'server.port': Number(new URL(REDIS_URL).port || 6379),
    });
    expect(spansOf.map((s) => s.name)).toEqual(expect.arrayContaining(['api_key lookup', 'rate_limit']));
  }
  expect(create.find((s) => s.name === 'INSERT pets')?.attributes).toMatchObject({ 'db.system.name': 'sqlite' });
  expect(list.find((s) => s.name === 'SELECT pets')?.attributes).toMatchObject({ 'db.system.name': 'sqlite' });
  const exported = receiver
    .payloads()
    .map((p) => p.body.toString('latin1'))
    .join('\n');
  expect(exported).not.toContain(apiKey);
});
