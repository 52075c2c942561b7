/**
 * Trace context from the caller to the service: with an SDK registered (as an app with OpenTelemetry has it), each
 * attempt is a CLIENT span under the caller's span and sends its own `traceparent`; `tracestate` is carried along.
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAnimalStoreClient } from './index.js';
import { closedPort, type Peer, RATE_HEADERS, startPeer } from './test-support/peer.js';

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
const API_KEY = 'ask_secret-key-never-in-a-span';

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
});
afterAll(() => {
  trace.disable();
  propagation.disable();
  context.disable();
});
let peer: Peer | undefined;
afterEach(async () => {
  exporter.reset();
  await peer?.close();
  peer = undefined;
});

/** The spans ended so far (the processor exports each one asynchronously). */
async function finished() {
  await provider.forceFlush();
  return exporter.getFinishedSpans();
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;
const caller = trace.getTracer('test');
const retryNow = { retry: { baseDelayMs: 1, random: () => 0 } };

describe('with @opentelemetry/api and an SDK registered', () => {
  it('makes one CLIENT span per attempt under the caller, each sending its own traceparent', async () => {
    peer = await startPeer([
      {
        status: 503,
        headers: { 'Retry-After': '0' },
        body: { code: 'service_unavailable', message: 'x', status: 503 },
      },
      { status: 200, headers: RATE_HEADERS, body: [] },
    ]);
    const client = createAnimalStoreClient({ baseUrl: peer.baseUrl, apiKey: API_KEY, ...retryNow });
    const parent = await caller.startActiveSpan('caller', async (span) => {
      const result = await client.listPets({ query: { limit: 2 } });
      expect(result.status).toBe(200);
      span.end();
      return span.spanContext();
    });

    const attempts = (await finished()).filter((s) => s.kind === SpanKind.CLIENT);
    expect(attempts).toHaveLength(2);
    expect(peer.requests).toHaveLength(2);
    attempts.forEach((span, i) => {
      const sent = TRACEPARENT.exec(String(peer!.requests[i]!.headers.traceparent));
      expect(sent?.[1]).toBe(parent.traceId);
      expect(sent?.[2]).toBe(span.spanContext().spanId);
      expect(span.spanContext().traceId).toBe(parent.traceId);
      expect(span.parentSpanContext?.spanId).toBe(parent.spanId);
      expect(span.name).toBe('GET /v1/pets');
      expect(span.attributes).toMatchObject({
        'http.request.method': 'GET',
        'server.address': '127.0.0.1',
        'server.port': Number(new URL(peer!.origin).port),
        'url.full': `${peer!.origin}/v1/pets?limit=2`,
        'url.template': '/v1/pets',
      });
    });
    expect(attempts[0]!.attributes).toMatchObject({ 'http.response.status_code': 503, 'error.type': '503' });
    expect(attempts[0]!.attributes['http.request.resend_count']).toBeUndefined();
    expect(attempts[0]!.status.code).toBe(SpanStatusCode.ERROR);
    expect(attempts[1]!.attributes).toMatchObject({ 'http.response.status_code': 200, 'http.request.resend_count': 1 });
    expect(attempts[1]!.status.code).toBe(SpanStatusCode.UNSET);
    expect(attempts[1]!.attributes['error.type']).toBeUndefined();
    expect(JSON.stringify((await finished()).map((s) => s.attributes))).not.toContain(API_KEY);
  });

  it('names a span by the route pattern, not the path, and carries the caller tracestate', async () => {
    peer = await startPeer([{ status: 200, headers: RATE_HEADERS, body: { id: 7, name: 'Rex', categoryId: 1 } }]);
    const client = createAnimalStoreClient({ baseUrl: peer.baseUrl, apiKey: API_KEY, onDeprecation: () => {} });
    const incoming = propagation.extract(ROOT_CONTEXT, {
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      tracestate: 'vendor=opaque',
    });
    await context.with(incoming, () => client.getPet({ params: { petId: 7 } }));

    const [span] = await finished();
    expect(span?.name).toBe('GET /v1/pets/:petId');
    expect(span?.attributes['url.full']).toBe(`${peer.origin}/v1/pets/7`);
    expect(span?.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    const [request] = peer.requests;
    expect(TRACEPARENT.exec(String(request?.headers.traceparent))?.[1]).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(request?.headers.tracestate).toBe('vendor=opaque');
  });

  it('ends an attempt that failed on the network with the error code as error.type', async () => {
    const port = await closedPort();
    const client = createAnimalStoreClient({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: API_KEY, ...retryNow });
    await expect(client.listPets({ query: {} })).rejects.toThrow();

    const attempts = await finished();
    expect(attempts).toHaveLength(4);
    for (const span of attempts) {
      expect(span.attributes['error.type']).toBe('ECONNREFUSED');
      expect(span.status.code).toBe(SpanStatusCode.ERROR);
      expect(span.attributes['http.response.status_code']).toBeUndefined();
    }
    expect(attempts.map((s) => s.attributes['http.request.resend_count'])).toEqual([undefined, 1, 2, 3]);
  });

  it('traces the pages paginatePets follows', async () => {
    peer = await startPeer((request) =>
      request.url.includes('cursor')
        ? { status: 200, headers: RATE_HEADERS, body: [] }
        : { status: 200, headers: { ...RATE_HEADERS, Link: '</v1/pets?cursor=abc>; rel="next"' }, body: [] },
    );
    const client = createAnimalStoreClient({ baseUrl: peer.baseUrl, apiKey: API_KEY });
    for await (const _pet of client.paginatePets()) void _pet;
    expect((await finished()).map((s) => s.name)).toEqual(['GET /v1/pets', 'GET /v1/pets']);
    expect(peer.requests.every((r) => TRACEPARENT.test(String(r.headers.traceparent)))).toBe(true);
  });
});
