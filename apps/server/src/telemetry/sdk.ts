/**
 * The OpenTelemetry SDK, started only when tracing is configured (main.ts imports this module dynamically, so with
 * tracing off none of it is loaded). Spans go in batches to an OTLP/HTTP endpoint (protobuf or JSON), which the
 * exporter reads from the standard OTEL_EXPORTER_OTLP_* variables itself, as the resource detector reads
 * OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES. No auto-instrumentation: the server makes its own spans (cheaper
 * and exact on its fast paths), with the lean tracer on the SDK's sampler, ids and batch processor (lean-tracer.ts);
 * Prisma's instrumentation adds Prisma's spans (the API-key queries) through the SDK's own tracer, inside sampled
 * requests only (onlyInSampledTraces).
 */
import { randomUUID } from 'node:crypto';
import {
  context,
  type Context,
  type ContextManager,
  diag,
  DiagLogLevel,
  propagation,
  SpanKind,
  trace,
  TraceFlags,
  type TextMapPropagator,
  type Tracer,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  detectResources,
  envDetector,
  hostDetector,
  processDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  type IdGenerator,
  ParentBasedSampler,
  type Sampler,
  SamplingDecision,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { PrismaInstrumentation } from '@prisma/instrumentation';
import { getGlobalTracingHelper, setGlobalTracingHelper, type TracingHelper } from '@prisma/instrumentation-contract';
import type { OtlpProtocol, Propagator, SamplerConfig, TracingConfig } from '../config/otel.js';
import type { Logger } from '../logger.js';
import { LEAN_ROOT } from './lean-context.js';
import { LeanTracer } from './lean-tracer.js';
import { RandomIds } from './random-ids.js';
import type { RequestSampling } from './spans.js';

export const TRACER_NAME = '@animal-store/server';

export interface TracingRuntime {
  readonly tracer: Tracer;
  /** How a request's trace begins: sampled first, a span only when sampled. */
  readonly sampling: RequestSampling;
  /** Exports what is still queued, then unregisters everything (idempotent). */
  shutdown(): Promise<void>;
}

/** Registers the SDK globally (context manager, propagators, tracer provider, Prisma's instrumentation). */
export async function startTracing(
  config: Extract<TracingConfig, { enabled: true }>,
  service: { name: string; version: string },
  logger?: Logger,
): Promise<TracingRuntime> {
  // The SDK's own problems (an export that failed, a full queue) as warnings in our log, not lost.
  if (logger) {
    diag.setLogger(
      {
        error: (message) => logger.warn({ otel: true }, message),
        warn: (message) => logger.warn({ otel: true }, message),
        info: () => {},
        debug: () => {},
        verbose: () => {},
      },
      DiagLogLevel.WARN,
    );
  }
  const resource = resourceFromAttributes({
    'service.name': service.name,
    'service.version': service.version,
    'service.instance.id': randomUUID(),
  }).merge(detectResources({ detectors: [hostDetector, processDetector, envDetector] }));
  const sampler = samplerOf(config.sampler);
  const ids = new RandomIds();
  const batch = new BatchSpanProcessor({ exporter: await exporterFor(config.protocol), ...config.batch });
  const spanProcessors = [batch];
  // Registered globally for any library that traces through the API; the server's own spans are the lean tracer's.
  const provider = new TracerProvider({ resource, sampler, idGenerator: ids, spanProcessors });
  // Prisma's spans only inside a sampled request: an unsampled request runs in no span's context, so its key lookup
  // would otherwise begin a trace of its own, sampled by the ratio, with no request above it.
  const prismaProvider = new TracerProvider({
    resource,
    sampler: new ParentBasedSampler({ root: new AlwaysOffSampler() }),
    spanProcessors,
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(propagatorOf(config.propagators));
  trace.setGlobalTracerProvider(provider);
  const prisma = new PrismaInstrumentation();
  prisma.setTracerProvider(prismaProvider);
  prisma.enable();
  const prismaHelper = getGlobalTracingHelper();
  if (prismaHelper) setGlobalTracingHelper(onlyInSampledTraces(prismaHelper, contextManager));

  let stopped: Promise<void> | undefined;
  const tracer = new LeanTracer(sampler, ids, batch, resource, { name: TRACER_NAME }, config.sampler.parentBased);
  return {
    tracer,
    sampling: requestSampling(tracer, sampler, ids, rootDecision(config.sampler), contextManager),
    shutdown() {
      stopped ??= (async () => {
        prisma.disable();
        await Promise.all([provider.shutdown(), prismaProvider.shutdown()]);
        trace.disable();
        propagation.disable();
        context.disable();
        diag.disable();
      })();
      return stopped;
    },
  };
}

/** The trace parent Prisma's own disabled helper gives: no trace, not sampled. */
const NO_TRACE_PARENT = '00-10-10-00';

/**
 * Prisma's tracing helper (the global one its client asks on every call), enabled only in the context of a sampled
 * span: elsewhere it answers as Prisma's disabled helper does, so a query outside a sampled request (an unsampled
 * request's key lookup) runs as it would with tracing off. Enabled, Prisma's client asks the helper for a span around
 * the query and around each step of its plan, which without this the SDK's tracer would make (non-recording, each in a
 * context of its own) for every query of every request, to export none of them. Prisma's spans are sampled by their
 * parent only (its provider's sampler: parent-based, never a root), so where the context holds no sampled span the
 * helper would have made no span that records: the gate loses none.
 */
export function onlyInSampledTraces(helper: TracingHelper, contexts: Pick<ContextManager, 'active'>): TracingHelper {
  const sampledIn = (context: Context | undefined) =>
    ((trace.getSpanContext(context ?? contexts.active())?.traceFlags ?? TraceFlags.NONE) & TraceFlags.SAMPLED) !== 0;
  return {
    isEnabled: () => sampledIn(undefined),
    getTraceParent: (context) => (sampledIn(context) ? helper.getTraceParent(context) : NO_TRACE_PARENT),
    dispatchEngineSpans(spans, events, emitLogEvent) {
      if (sampledIn(undefined)) helper.dispatchEngineSpans(spans, events, emitLogEvent);
      else for (const event of events) emitLogEvent(event);
    },
    getActiveContext: () => (sampledIn(undefined) ? helper.getActiveContext() : undefined),
    runInChildSpan: (nameOrOptions, callback) =>
      sampledIn(typeof nameOrOptions === 'string' ? undefined : nameOrOptions.context)
        ? helper.runInChildSpan(nameOrOptions, callback)
        : callback(),
  };
}

/** No attribute is given to the request's sampling: none of the samplers OTEL_TRACES_SAMPLER names reads them. */
const NO_ATTRIBUTES = Object.freeze({});

/**
 * The request sampling on the provider's own sampler and ids: the decision is the one the tracer makes when the span
 * starts (the same sampler on the same parent and trace id), taken first, so an unsampled request never starts one.
 * A request that continues no trace (its parent the empty root) is decided by `rootSampled`, the same answer.
 */
function requestSampling(
  tracer: LeanTracer,
  sampler: Sampler,
  ids: IdGenerator,
  rootSampled: (traceId: string) => boolean,
  contexts: ContextManager,
): RequestSampling {
  return {
    active: () => contexts.active(),
    root: LEAN_ROOT,
    traceId: () => ids.generateTraceId(),
    spanId: () => ids.generateSpanId(),
    sampled: (parent: Context, traceId: string, name: string) =>
      parent === LEAN_ROOT
        ? rootSampled(traceId)
        : sampler.shouldSample(parent, traceId, name, SpanKind.SERVER, NO_ATTRIBUTES, []).decision !==
          SamplingDecision.NOT_RECORD,
    start: (name, options, parent, traceId) => tracer.startIn(name, options, parent, traceId),
  };
}

/**
 * The configured sampler's decision for a trace that has no parent, on a valid trace id (RandomIds makes no other),
 * without the SDK's way to the same answer, which every request would take: the parent-based sampler's look for a
 * parent, the id's validity regex and a result object. TraceIdRatioBasedSampler's rule, as @opentelemetry/sdk-trace
 * has it: the id's four 32-bit words XORed, sampled below the ratio times 2^32 - 1 (every id at ratio 1), so a trace
 * is decided alike wherever the same ratio decides it. sdk.test.ts holds it to the SDK's samplers.
 */
export function rootDecision({ root, ratio }: Pick<SamplerConfig, 'root' | 'ratio'>): (traceId: string) => boolean {
  if (root === 'always_on') return () => true;
  if (root === 'always_off') return () => false;
  // The SDK's clamp of the ratio to 0..1 needs no step here: at or past 1 every id is below the bound, and at or below
  // 0 (or NaN) none is.
  const bound = ratio >= 1 ? 2 ** 32 : Math.floor(ratio * 0xffffffff);
  return (traceId) => xorOfWords(traceId) < bound;
}

/** The XOR of a 32-hex-digit id's four 32-bit words, unsigned (lower- or upper-case digits). */
function xorOfWords(id: string): number {
  let xor = 0;
  for (let at = 0; at < 32; at += 8) {
    let word = 0;
    for (let i = at; i < at + 8; i++) {
      const c = id.charCodeAt(i);
      word = (word << 4) | (c < 58 ? c - 48 : c < 71 ? c - 55 : c - 87);
    }
    xor = (xor ^ word) >>> 0;
  }
  return xor;
}

function samplerOf({ root, parentBased, ratio }: SamplerConfig): Sampler {
  const sampler =
    root === 'always_on'
      ? new AlwaysOnSampler()
      : root === 'always_off'
        ? new AlwaysOffSampler()
        : new TraceIdRatioBasedSampler(ratio);
  return parentBased ? new ParentBasedSampler({ root: sampler }) : sampler;
}

function propagatorOf(names: Propagator[]): TextMapPropagator {
  const propagators: TextMapPropagator[] = names.map((name) =>
    name === 'tracecontext' ? new W3CTraceContextPropagator() : new W3CBaggagePropagator(),
  );
  return new CompositePropagator({ propagators });
}

/**
 * The exporter of the configured protocol: encoded here, sent from a worker thread by the official transport, which
 * reads its endpoint, headers and timeout from OTEL_EXPORTER_OTLP_* (otlp-exporter.ts).
 */
async function exporterFor(protocol: OtlpProtocol): Promise<SpanExporter> {
  const { OtlpSpanExporter } = await import('./otlp-exporter.js');
  return new OtlpSpanExporter(protocol);
}
