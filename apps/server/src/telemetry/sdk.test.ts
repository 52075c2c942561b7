/**
 * The SDK bootstrap against a real OTLP/HTTP receiver, in both protocols, configured only by the standard variables;
 * and the parsing of those variables (tracing off unless an endpoint is set).
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { startOtlpReceiver, type OtlpReceiver } from '@animal-store/test-services';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { OtelEnvSchema, tracingConfig, type TracingConfig } from '../config/otel.js';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  type Sampler,
  SamplingDecision,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace';
import { type EngineTraceEvent, getGlobalTracingHelper } from '@prisma/instrumentation-contract';
import { RandomIds } from './random-ids.js';
import { rootDecision, startTracing } from './sdk.js';

const config = (env: Record<string, string>) => tracingConfig(OtelEnvSchema.parse(env));
const on = (env: Record<string, string>) => config(env) as Extract<TracingConfig, { enabled: true }>;

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(() => receiver.close());
afterEach(() => {
  vi.unstubAllEnvs();
});

describe.each(['http/protobuf', 'http/json'] as const)('exporting over OTLP %s', (protocol) => {
  it('sends spans with the resource the standard variables describe', async () => {
    // The exporter and the resource detector read these themselves (the SDK's contract with the environment).
    vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', receiver.url);
    vi.stubEnv('OTEL_SERVICE_NAME', `svc-${protocol}`);
    vi.stubEnv('OTEL_RESOURCE_ATTRIBUTES', 'deployment.environment.name=test,team=pets');
    const runtime = await startTracing(
      on({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: protocol }),
      {
        name: 'animal-store',
        version: '1.2.3',
      },
    );
    const parent = runtime.tracer.startActiveSpan('parent', { kind: SpanKind.SERVER }, (span) => {
      runtime.tracer.startSpan('child').end();
      span.end();
      return span.spanContext();
    });
    await runtime.shutdown();

    const spans = await receiver.waitFor((all) => all.some((s) => s.resource['service.name'] === `svc-${protocol}`));
    const mine = spans.filter((s) => s.traceId === parent.traceId);
    expect(mine.map((s) => s.name).sort()).toEqual(['child', 'parent']);
    const child = mine.find((s) => s.name === 'child')!;
    expect(child.parentSpanId).toBe(parent.spanId);
    expect(mine.find((s) => s.name === 'parent')?.kind).toBe('server');
    expect(child.scope).toBe('@animal-store/server');
    expect(child.resource).toMatchObject({
      'service.name': `svc-${protocol}`,
      'service.version': '1.2.3',
      'deployment.environment.name': 'test',
      team: 'pets',
    });
    expect(typeof child.resource['service.instance.id']).toBe('string');
    const contentType = protocol === 'http/json' ? 'application/json' : 'application/x-protobuf';
    expect(receiver.payloads().some((p) => p.contentType === contentType)).toBe(true);
    // Unregistered at shutdown: the API is a no-op again.
    expect(trace.getTracer('x').startSpan('y').isRecording()).toBe(false);
  });
});

it('samples by the configured ratio, following an incoming parent when parent-based', async () => {
  vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', receiver.url);
  const runtime = await startTracing(
    on({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0',
    }),
    { name: 'animal-store', version: '0' },
  );
  expect(runtime.tracer.startSpan('root').isRecording()).toBe(false);
  const sampledParent = propagation.extract(ROOT_CONTEXT, {
    traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  });
  const child = runtime.tracer.startSpan('continued', {}, sampledParent);
  expect(child.isRecording()).toBe(true);
  expect(child.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
  child.end();
  await runtime.shutdown();
  expect(context.active()).toBe(ROOT_CONTEXT);
});

it("gives Prisma's client a tracing helper that is enabled only inside a sampled span", async () => {
  vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', receiver.url);
  vi.stubEnv('OTEL_SERVICE_NAME', 'prisma-gate');
  const runtime = await startTracing(on({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }), { name: 'gate', version: '0' });
  // The helper Prisma's client reads from the global its contract names, on every call.
  const helper = getGlobalTracingHelper()!;
  const emitted: unknown[] = [];
  const event: EngineTraceEvent = { spanId: '1', target: 'q', level: 'query', timestamp: [0, 0], attributes: {} };
  // Outside any span (an unsampled request's key lookup): as Prisma's disabled helper, no span made or asked for.
  expect(helper.isEnabled()).toBe(false);
  expect(helper.getTraceParent()).toBe('00-10-10-00');
  expect(helper.getActiveContext()).toBeUndefined();
  expect(helper.runInChildSpan('operation', (...args: unknown[]) => args)).toEqual([]);
  helper.dispatchEngineSpans([], [event], (e) => emitted.push(e));
  expect(emitted).toEqual([event]);
  const unsampled = propagation.extract(ROOT_CONTEXT, {
    traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00',
  });
  context.with(unsampled, () => expect(helper.isEnabled()).toBe(false));
  const sampledRemote = propagation.extract(ROOT_CONTEXT, {
    traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  });
  context.with(sampledRemote, () => expect(helper.isEnabled()).toBe(true));
  // Inside a sampled span: Prisma's own helper, its spans children of that span.
  const parent = runtime.tracer.startActiveSpan('request', (span) => {
    expect(helper.isEnabled()).toBe(true);
    expect(helper.getTraceParent()).toBe(`00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);
    helper.runInChildSpan('operation', (child) => child?.end());
    span.end();
    return span.spanContext();
  });
  // A span (not made active) asked for in a sampled span's context given explicitly, from outside that span.
  const given = trace.setSpanContext(ROOT_CONTEXT, parent);
  helper.runInChildSpan({ name: 'serialize', active: false, context: given }, (s) => s?.end());
  await runtime.shutdown();
  const spans = await receiver.waitFor((all) => all.filter((s) => s.traceId === parent.traceId).length === 3);
  const mine = spans.filter((s) => s.traceId === parent.traceId);
  expect(mine.map((s) => s.name).sort()).toEqual(['prisma:client:operation', 'prisma:client:serialize', 'request']);
  for (const s of mine.filter((s) => s.name !== 'request')) expect(s.parentSpanId).toBe(parent.spanId);
  expect(spans.filter((s) => s.resource['service.name'] === 'prisma-gate' && s.traceId !== parent.traceId)).toEqual([]);
});

describe('the OTEL_* variables', () => {
  it('leave tracing off without an endpoint, or when disabled', () => {
    expect(config({})).toEqual({ enabled: false });
    expect(config({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' })).toEqual({ enabled: false });
    expect(config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' })).toEqual({
      enabled: false,
    });
    expect(config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' })).toEqual({
      enabled: false,
    });
  });

  it('turn it on with an endpoint: protobuf, parent-based always-on and W3C propagation by default', () => {
    expect(config({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://c:4318/v1/traces' })).toMatchObject({
      enabled: true,
      protocol: 'http/protobuf',
      sampler: { root: 'always_on', parentBased: true, ratio: 1 },
      propagators: ['tracecontext', 'baggage'],
      batch: { scheduledDelayMillis: 5000, maxQueueSize: 2048, maxExportBatchSize: 512, exportTimeoutMillis: 30000 },
    });
    expect(
      config({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
        OTEL_TRACES_SAMPLER: 'traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.1',
        OTEL_BSP_SCHEDULE_DELAY: '200',
      }),
    ).toMatchObject({
      protocol: 'http/json',
      sampler: { root: 'traceidratio', parentBased: false, ratio: 0.1 },
      batch: { scheduledDelayMillis: 200 },
    });
  });

  it('refuse what we do not ship or cannot mean', () => {
    const refused = (env: Record<string, string>) => OtelEnvSchema.safeParse(env).error?.issues[0]?.message;
    expect(refused({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toMatch(/http\/protobuf, http\/json/);
    expect(refused({ OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toMatch(/OTEL_TRACES_SAMPLER must be one of/);
    expect(refused({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toMatch(/http\(s\) URL/);
    expect(refused({ OTEL_PROPAGATORS: 'tracecontext,b3' })).toMatch(/only tracecontext, baggage, none/);
    expect(refused({ OTEL_BSP_SCHEDULE_DELAY: 'soon' })).toMatch(/whole number/);
    expect(refused({ OTEL_TRACES_SAMPLER_ARG: '10%' })).toMatch(/OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/);
    expect(refused({ OTEL_TRACES_SAMPLER_ARG: '1.5' })).toMatch(/OTEL_TRACES_SAMPLER_ARG/);
  });
});

describe('the decision for a request that continues no trace', () => {
  const sdkSays = (sampler: Sampler, id: string) =>
    sampler.shouldSample(ROOT_CONTEXT, id, 'GET', SpanKind.SERVER, {}, []).decision !== SamplingDecision.NOT_RECORD;
  const ids = new RandomIds();
  const randomIds = Array.from({ length: 4000 }, () => ids.generateTraceId());
  // The words' XOR at its ends and around each bound below, in both cases of hex digits.
  const edges = [
    'ffffffff000000000000000000000000',
    '0000000000000000000000000000000f',
    'FFFFFFFF00000000000000000000000A',
  ];
  const samples = [...randomIds, ...edges, '19999998000000000000000000000000', '19999999000000000000000000000000'];

  it.each([0, 0.0001, 0.1, 0.25, 0.5, 0.9999, 1, -0.5, 1.5, NaN])(
    'is the SDK ratio sampler at %s, for every id',
    (ratio) => {
      const decide = rootDecision({ root: 'traceidratio', ratio });
      const sdk = new TraceIdRatioBasedSampler(ratio);
      const differing = samples.filter((id) => decide(id) !== sdkSays(sdk, id));
      expect(differing).toEqual([]);
      // Not a constant: about the ratio's share of random ids is sampled.
      const sampled = randomIds.filter((id) => decide(id)).length;
      if (ratio >= 0.1 && ratio <= 0.9) expect(Math.abs(sampled / randomIds.length - ratio)).toBeLessThan(0.05);
    },
  );

  it('is always or never with always_on and always_off', () => {
    const on = rootDecision({ root: 'always_on', ratio: 1 });
    const off = rootDecision({ root: 'always_off', ratio: 1 });
    for (const id of samples.slice(0, 200)) {
      expect(on(id)).toBe(sdkSays(new AlwaysOnSampler(), id));
      expect(off(id)).toBe(sdkSays(new AlwaysOffSampler(), id));
    }
  });
});
