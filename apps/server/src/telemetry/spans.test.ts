/**
 * The span helpers with the real SDK exporting to a real OTLP receiver: a leaf span is a child of the active span
 * without becoming the active one, failures mark it, and an unsampled request builds no span options at all.
 */
import { trace } from '@opentelemetry/api';
import { startOtlpReceiver, type OtlpReceiver } from '@animal-store/test-services';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { OtelEnvSchema, tracingConfig, type TracingConfig } from '../config/otel.js';
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
  useTracer(runtime.tracer);
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
