/**
 * The lean tracer against the SDK's own Tracer: the same operations on both, with the same sampler, ids, resource and
 * processor, export the same OTLP (the official JSON serializer's output, times aside), and the lean spans keep the
 * SDK's rules on sampling, suppression, times and ended spans.
 */
import {
  context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Tracer,
} from '@opentelemetry/api';
import { hrTimeDuration, hrTimeToNanoseconds, suppressTracing, TraceState } from '@opentelemetry/core';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOnSampler,
  type IdGenerator,
  ParentBasedSampler,
  type ReadableSpan,
  type Sampler,
  type SpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { LeanTracer } from './lean-tracer.js';

/** Ids counted from 1, trace and span ids apart, so both tracers make the same ids whatever their order of calls. */
class CountingIds implements IdGenerator {
  private traces = 0;
  private spans = 0;
  generateTraceId = () => (++this.traces).toString(16).padStart(32, '0');
  generateSpanId = () => (++this.spans).toString(16).padStart(16, '0');
}

const resource = resourceFromAttributes({ 'service.name': 'lean-tracer-test' });
const SCOPE = 'lean-tracer-test';

function recorder() {
  const started: Span[] = [];
  const ended: ReadableSpan[] = [];
  const processor: SpanProcessor = {
    onStart: (span) => started.push(span),
    onEnd: (span) => ended.push(span),
    forceFlush: async () => {},
    shutdown: async () => {},
  };
  return { processor, started, ended };
}

function tracers(sampler: Sampler = new AlwaysOnSampler(), parentBased = false) {
  const sdk = recorder();
  const lean = recorder();
  return {
    sdk: {
      ...sdk,
      tracer: new TracerProvider({
        resource,
        sampler,
        idGenerator: new CountingIds(),
        spanProcessors: [sdk.processor],
      }).getTracer(SCOPE),
    },
    lean: {
      ...lean,
      tracer: new LeanTracer(sampler, new CountingIds(), lean.processor, resource, { name: SCOPE }, parentBased),
    },
  };
}

/** What the server does with spans, and what the API allows besides. */
function script(tracer: Tracer): void {
  const remote = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: 'a'.repeat(32),
    spanId: 'b'.repeat(16),
    traceFlags: TraceFlags.SAMPLED,
    traceState: new TraceState('vendor=1'),
    isRemote: true,
  });
  tracer.startActiveSpan(
    'GET',
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': 'GET' } },
    remote,
    (req) => {
      req.setAttributes({ 'url.path': '/v1/pets', 'server.port': 3000, 'tags.list': ['a', 'b'], invalid: {} });
      req.setAttribute('', 'no key');
      const memberAttributes = { member: 2, tags: ['a'] };
      const links = [
        { context: req.spanContext() },
        { context: { ...req.spanContext(), spanId: 'c'.repeat(16) }, attributes: memberAttributes },
      ];
      const shared = tracer.startSpan('SELECT pets', { kind: SpanKind.CLIENT, links });
      // The span keeps its own copies: what the caller changes afterwards does not reach it.
      links.push({ context: { ...req.spanContext(), spanId: 'e'.repeat(16) } });
      memberAttributes.member = 3;
      memberAttributes.tags.push('b');
      shared.addLink({ context: { ...req.spanContext(), spanId: 'd'.repeat(16) } });
      shared.addEvent('rows', { 'db.response.returned_rows': 20, nested: [[1]] as never });
      shared.end();
      const failed = tracer.startSpan('EVALSHA', { kind: SpanKind.CLIENT });
      // No stack: the two tracers' calls differ in it.
      failed.recordException(Object.assign(new Error('down'), { code: 'ECONNREFUSED', stack: '' }));
      failed.setStatus({ code: SpanStatusCode.ERROR, message: 'ECONNREFUSED' });
      failed.setStatus({ code: SpanStatusCode.UNSET });
      failed.end();
      const timed = tracer.startSpan('timed', { startTime: 1_700_000_000_123.5 });
      timed.end([1_700_000_001, 250]);
      req.updateName('GET /v1/pets');
      req.setStatus({ code: SpanStatusCode.OK });
      req.setStatus({ code: SpanStatusCode.ERROR, message: 'ignored after OK' });
      req.end();
      // Ended: nothing changes any more, and it is not handed to the processor again.
      req.setAttribute('late', 1);
      req.updateName('late');
      req.addEvent('late');
      req.end();
    },
  );
  tracer.startSpan('root', { root: true }, remote).end();
}

/** The official JSON export of `spans` with every time taken out. */
function exported(spans: ReadableSpan[]): unknown {
  const json = JSON.parse(Buffer.from(JsonTraceSerializer.serializeRequest(spans)!).toString('utf8')) as unknown;
  return JSON.parse(JSON.stringify(json, (key: string, value: unknown) => (/UnixNano$/.test(key) ? 't' : value)));
}

describe('the lean tracer', () => {
  it.each([
    ['always on', new AlwaysOnSampler(), false],
    [
      'parent-based, children of sampled spans not asked',
      new ParentBasedSampler({ root: new AlwaysOnSampler() }),
      true,
    ],
  ] as const)('exports what the SDK Tracer exports for the same operations (%s)', (_, sampler, parentBased) => {
    const { sdk, lean } = tracers(sampler, parentBased);
    script(sdk.tracer);
    script(lean.tracer);
    expect(lean.ended.map((s) => s.name)).toEqual(['SELECT pets', 'EVALSHA', 'timed', 'GET /v1/pets', 'root']);
    expect(lean.started).toHaveLength(5);
    expect(exported(lean.ended)).toEqual(exported(sdk.ended));
    const [req] = lean.ended.filter((s) => s.name === 'GET /v1/pets');
    expect(req!.parentSpanContext?.spanId).toBe('b'.repeat(16));
    expect(req!.spanContext().traceState?.serialize()).toBe('vendor=1');
    expect(req!.attributes).not.toHaveProperty('late');
    expect(lean.ended.find((s) => s.name === 'root')!.parentSpanContext).toBeUndefined();
  });

  it('keeps explicit times exactly, and others as the SDK takes them', () => {
    const { sdk, lean } = tracers();
    script(sdk.tracer);
    script(lean.tracer);
    const timed = (spans: ReadableSpan[]) => spans.find((s) => s.name === 'timed')!;
    expect(timed(lean.ended).startTime).toEqual(timed(sdk.ended).startTime);
    expect(timed(lean.ended).endTime).toEqual([1_700_000_001, 250]);
    for (const span of lean.ended) {
      expect(hrTimeToNanoseconds(span.endTime)).toBeGreaterThanOrEqual(hrTimeToNanoseconds(span.startTime));
      expect(span.duration).toEqual(hrTimeDuration(span.startTime, span.endTime));
      expect(span.ended).toBe(true);
    }
    // The SDK's start is the wall clock's millisecond; the end adds the monotonic clock's duration to it.
    const before = Date.now();
    const span = lean.tracer.startSpan('now') as unknown as ReadableSpan & Span;
    const after = Date.now();
    const [seconds, nanos] = span.startTime;
    expect(nanos % 1e6).toBe(0);
    const startMs = seconds * 1000 + nanos / 1e6;
    expect(startMs).toBeGreaterThanOrEqual(before);
    expect(startMs).toBeLessThanOrEqual(after);
    expect(span.ended).toBe(false);
    expect(span.duration).toEqual([-1, -1]);
  });

  it('samples as the configured sampler decides, and records nothing in a suppressed context', () => {
    const { lean } = tracers(new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0) }));
    const dropped = lean.tracer.startSpan('dropped');
    expect(dropped.isRecording()).toBe(false);
    expect(dropped.spanContext().traceFlags).toBe(TraceFlags.NONE);
    const sampledParent = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: 'e'.repeat(32),
      spanId: 'f'.repeat(16),
      traceFlags: TraceFlags.SAMPLED,
    });
    const kept = lean.tracer.startSpan('kept', {}, sampledParent);
    expect(kept.isRecording()).toBe(true);
    expect(kept.spanContext().traceId).toBe('e'.repeat(32));
    kept.end();
    const suppressed = context.with(suppressTracing(sampledParent), () => lean.tracer.startSpan('suppressed'));
    expect(suppressed.isRecording()).toBe(false);
    suppressed.end();
    expect(lean.ended.map((s) => s.name)).toEqual(['kept']);
  });

  it('asks a parent-based sampler only about spans whose parent is not a sampled span of its own', () => {
    const asked: string[] = [];
    const ratio = new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0) });
    const sampler: Sampler = {
      shouldSample: (...args) => (asked.push(args[2]), ratio.shouldSample(...args)),
      toString: () => 'spy',
    };
    const { lean } = tracers(sampler, true);
    const remote = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: 'e'.repeat(32),
      spanId: 'f'.repeat(16),
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    const request = lean.tracer.startSpan('request', {}, remote);
    const child = lean.tracer.startSpan('child', {}, trace.setSpan(ROOT_CONTEXT, request));
    expect(child.isRecording()).toBe(true);
    expect(child.spanContext().traceFlags).toBe(TraceFlags.SAMPLED);
    const orphan = lean.tracer.startSpan('orphan');
    expect(orphan.isRecording()).toBe(false);
    expect(asked).toEqual(['request', 'orphan']);
  });

  it('starts a span in the trace it is given, under the context span of that trace only', () => {
    const { lean } = tracers();
    const traceId = '1'.repeat(32);
    const span = lean.tracer.startIn(
      'GET',
      { kind: SpanKind.SERVER },
      ROOT_CONTEXT,
      traceId,
    ) as unknown as ReadableSpan;
    expect(span.spanContext().traceId).toBe(traceId);
    expect(span.parentSpanContext).toBeUndefined();
    const parent = trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: '2'.repeat(16), traceFlags: 1 });
    const child = lean.tracer.startIn('child', {}, parent, traceId) as unknown as ReadableSpan;
    expect(child.parentSpanContext?.spanId).toBe('2'.repeat(16));
  });
});
