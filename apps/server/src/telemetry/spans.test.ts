/**
 * The span helpers with the real SDK exporting to a real OTLP receiver: a leaf span is a child of the active span
 * without becoming the active one, failures mark it, and an unsampled request builds no span options at all.
 * A request's trace (request-telemetry.ts): the sampler decides before any span exists, on the incoming parent (its
 * sampled flag honoured by the parent-based samplers) and the trace id. An unsampled request makes no span and no
 * context, yet its log line continues the incoming trace; a sampled parent is always recorded, under the caller's span.
 */
import { randomBytes } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import { startOtlpReceiver, type OtlpReceiver } from '@animal-store/test-services';
import type { Request, Response } from 'express';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { OtelEnvSchema, tracingConfig, type TracingConfig } from '../config/otel.js';
import { Metrics } from './metrics.js';
import { beginRequest, endRequest, traceFields } from './request-telemetry.js';
import { startTracing, type TracingRuntime } from './sdk.js';
import { inLeafSpan, inSpan, useTracer } from './spans.js';

let receiver: OtlpReceiver;
let runtime: TracingRuntime | undefined;
const SERVICE = { name: 'spans-test', version: '0.0.0' };

async function tracing(env: Record<string, string>): Promise<TracingRuntime> {
  // The exporter reads its endpoint from the environment itself (the SDK's contract with it).
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
  const config = tracingConfig(OtelEnvSchema.parse({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...env }));
  runtime = await startTracing(config as Extract<TracingConfig, { enabled: true }>, SERVICE);
  useTracer(runtime.tracer, runtime.sampling);
  return runtime;
}

beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterEach(async () => {
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  useTracer(undefined);
  await runtime?.shutdown();
  runtime = undefined;
});
afterAll(() => receiver.close());

it('makes a leaf span a child of the active span, leaves the parent active, and marks a failure', async () => {
  const { tracer } = await tracing({});
  const parent = await tracer.startActiveSpan('request', async (span) => {
    const activeInside = inLeafSpan(
      'SELECT pets',
      { attributes: { 'db.system.name': 'sqlite' } },
      () => trace.getActiveSpan()?.spanContext().spanId,
    );
    expect(activeInside).toBe(span.spanContext().spanId);
    const failure = Object.assign(new Error('busy'), { code: 'SQLITE_BUSY' });
    await expect(inLeafSpan('EVALSHA', {}, () => Promise.reject(failure))).rejects.toBe(failure);
    span.end();
    return span.spanContext();
  });
  await runtime!.shutdown();

  const spans = await receiver.waitFor((all) => all.filter((s) => s.traceId === parent.traceId).length === 3);
  const mine = spans.filter((s) => s.traceId === parent.traceId);
  const select = mine.find((s) => s.name === 'SELECT pets')!;
  expect(select.parentSpanId).toBe(parent.spanId);
  expect(select.attributes['db.system.name']).toBe('sqlite');
  const evalsha = mine.find((s) => s.name === 'EVALSHA')!;
  expect(evalsha.parentSpanId).toBe(parent.spanId);
  expect(evalsha.status.code).toBe('error');
  expect(evalsha.attributes['error.type']).toBe('SQLITE_BUSY');
});

it('builds no span options inside an unsampled request, and still runs the work', async () => {
  const { tracer } = await tracing({ OTEL_TRACES_SAMPLER: 'always_off' });
  let built = 0;
  const options = () => {
    built++;
    return {};
  };
  const results = tracer.startActiveSpan('request', (span) => {
    expect(span.isRecording()).toBe(false);
    const out = [inSpan('idempotency check', options, () => 1), inLeafSpan('SELECT pets', options, () => 2)];
    span.end();
    return out;
  });
  expect(results).toEqual([1, 2]);
  expect(built).toBe(0);
});

const metrics = new Metrics(undefined, { version: '0.0.0' });

function caller(flags: '00' | '01') {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-${flags}` };
}

/** One GET through beginRequest and endRequest; what the chain saw as the active span, and the log line's fields. */
function request(headers: Record<string, string>) {
  const req = {
    method: 'GET',
    path: '/v1/pets',
    originalUrl: '/v1/pets',
    baseUrl: '/v1',
    route: { path: '/pets' },
    headers: { host: '127.0.0.1:3000', ...headers },
    protocol: 'http',
    ip: '127.0.0.1',
    socket: { remoteAddress: '127.0.0.1' },
    httpVersion: '1.1',
  } as unknown as Request;
  const res = { writableFinished: true, statusCode: 200 } as unknown as Response;
  let active: string | undefined = 'not run';
  beginRequest(req, metrics, () => {
    active = trace.getActiveSpan()?.spanContext().spanId;
  });
  endRequest(req, res, metrics, 0.001);
  return { active, fields: traceFields(req), traced: req.trace };
}

it('makes no span for an unsampled request, whose log line continues the incoming trace', async () => {
  await tracing({ OTEL_TRACES_SAMPLER: 'parentbased_always_on' });
  const parent = caller('00');
  const { active, fields, traced } = request({ traceparent: parent.traceparent });
  expect(typeof traced).toBe('string');
  expect(active).toBeUndefined();
  expect(fields?.trace_id).toBe(parent.traceId);
  expect(fields?.span_id).toMatch(/^[0-9a-f]{16}$/);
  expect(fields?.span_id).not.toBe(parent.spanId);

  // The same sampler samples a request with no parent: its span is the active one in the chain.
  const root = request({});
  expect(typeof root.traced).toBe('object');
  expect(root.active).toBe(root.fields?.span_id);
});

it('records a request whose parent is sampled, under ratio 0, as a child of the caller', async () => {
  await tracing({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' });
  const unsampledRoot = request({});
  expect(typeof unsampledRoot.traced).toBe('string');
  expect(unsampledRoot.fields?.trace_id).toMatch(/^[0-9a-f]{32}$/);

  const parent = caller('01');
  const { active, fields } = request({ traceparent: parent.traceparent, tracestate: 'caller=1' });
  expect(fields?.trace_id).toBe(parent.traceId);
  expect(active).toBe(fields?.span_id);
  await runtime!.shutdown();
  const spans = await receiver.waitFor((all) => all.some((s) => s.traceId === parent.traceId));
  const server = spans.find((s) => s.traceId === parent.traceId)!;
  expect(server).toMatchObject({ name: 'GET /v1/pets', kind: 'server', parentSpanId: parent.spanId });
  expect(server.spanId).toBe(fields?.span_id);
  expect(server.attributes).toMatchObject({ 'http.route': '/v1/pets', 'http.response.status_code': 200 });
  expect(spans.some((s) => s.traceId === unsampledRoot.fields?.trace_id)).toBe(false);
});

it('samples a root request by its trace id, the same id the exported span has', async () => {
  await tracing({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' });
  const requests = Array.from({ length: 200 }, () => request({}));
  const sampled = requests.filter((r) => typeof r.traced === 'object');
  // 200 draws at one half: outside 50..150 happens with a chance below 1e-12.
  expect(sampled.length).toBeGreaterThan(50);
  expect(sampled.length).toBeLessThan(150);
  await runtime!.shutdown();
  const ids = new Set(sampled.map((r) => r.fields!.trace_id));
  const spans = await receiver.waitFor((all) => [...ids].every((id) => all.some((s) => s.traceId === id)));
  const exported = new Set(spans.map((s) => s.traceId));
  expect(requests.filter((r) => typeof r.traced === 'string').some((r) => exported.has(r.fields!.trace_id))).toBe(
    false,
  );
});
