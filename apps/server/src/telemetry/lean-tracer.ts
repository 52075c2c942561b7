import {
  context as api,
  type Context,
  type Span,
  type SpanContext,
  SpanKind,
  type SpanOptions,
  trace,
  TraceFlags,
  type Tracer,
} from '@opentelemetry/api';
import { type InstrumentationScope, isTracingSuppressed } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import {
  type IdGenerator,
  type Sampler,
  SamplingDecision,
  type SamplingResult,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';
import { kept, LeanSpan, NO_LINKS, ownLink } from './lean-span.js';

/**
 * The server's own spans, made on the SDK's parts (its sampler, ids, resource and span processor, so its batching and
 * exporters) but not by its Tracer: the SDK's Tracer and SpanImpl clean every attribute twice, build the attribute
 * sets of its span-count metrics and a closure per span, and keep times as arrays from the start, which a request
 * making several spans pays in allocation and GC. A LeanSpan is one object holding what the exporters read
 * (ReadableSpan), its times as numbers until they are read.
 *
 * Rules kept from the SDK: a span is sampled by the configured sampler on its parent context, trace id, name, kind and
 * links, and recorded only then; a span of a suppressed context is a non-recording one; start and end as the SDK takes
 * them (the wall clock in milliseconds at the start, the duration from the monotonic clock), so exported times are the
 * same. An attribute is kept when the SDK would keep it (a list or map copied, as it copies them; the server's are
 * strings and numbers); any other value is left out, as the SDK leaves it out. What is not kept: the SDK's
 * attribute-count and length limits and its `otel.sdk.span.*` metrics (which nothing reads here); events and links
 * are not limited either, since the server adds none after a span starts.
 */
export class LeanTracer implements Tracer {
  constructor(
    private readonly sampler: Sampler,
    private readonly ids: IdGenerator,
    private readonly processor: SpanProcessor,
    private readonly resource: Resource,
    private readonly scope: InstrumentationScope,
    /**
     * The sampler is parent-based with the default samplers for a local parent (OTEL_TRACES_SAMPLER=parentbased_*):
     * then a child of a sampled span of ours is sampled, as that sampler would decide, without asking it.
     */
    private readonly parentBased = false,
  ) {}

  startSpan(name: string, options: SpanOptions = {}, ctx: Context = api.active()): Span {
    return this.started(name, options, ctx);
  }

  /** A span in trace `traceId` (a request's, decided before its span exists); its parent is `ctx`'s span, if any. */
  startIn(name: string, options: SpanOptions, ctx: Context, traceId: string): Span {
    return this.started(name, options, ctx, traceId);
  }

  /**
   * The span, if sampled, in trace `traceId` (by default its parent's, else a new one), under `ctx`'s span when that
   * is a valid span of the same trace.
   */
  private started(name: string, options: SpanOptions, ctx: Context, traceId?: string): Span {
    if (options.root) ctx = trace.deleteSpan(ctx);
    const parentSpan = trace.getSpan(ctx);
    let parent = validParent(parentSpan);
    traceId ??= parent?.traceId ?? this.ids.generateTraceId();
    if (parent?.traceId !== traceId) parent = undefined;
    const spanId = this.ids.generateSpanId();
    if (isTracingSuppressed(ctx)) return trace.wrapSpanContext({ traceId, spanId, traceFlags: TraceFlags.NONE });
    const kind = options.kind ?? SpanKind.INTERNAL;
    const links = options.links?.map(ownLink) ?? NO_LINKS;
    const result =
      this.parentBased && parentSpan instanceof LeanSpan && parent && parent.traceFlags & TraceFlags.SAMPLED
        ? SAMPLED
        : this.sampler.shouldSample(ctx, traceId, name, kind, options.attributes ?? {}, links);
    const spanContext: SpanContext = {
      traceId,
      spanId,
      traceFlags: result.decision === SamplingDecision.RECORD_AND_SAMPLED ? TraceFlags.SAMPLED : TraceFlags.NONE,
      traceState: result.traceState ?? parent?.traceState,
    };
    if (result.decision === SamplingDecision.NOT_RECORD) return trace.wrapSpanContext(spanContext);
    const attributes = options.attributes ? kept(options.attributes) : {};
    const span = new LeanSpan(this.processor, this.resource, this.scope, spanContext, name, kind, links, attributes);
    span.parentSpanContext = parent;
    if (result.attributes) span.setAttributes(result.attributes);
    if (options.startTime !== undefined) span.startAt(options.startTime);
    this.processor.onStart(span, ctx);
    return span;
  }

  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    ...rest: [F] | [SpanOptions, F] | [SpanOptions, Context, F]
  ): ReturnType<F> {
    const fn = rest[rest.length - 1] as F;
    const options = rest.length > 1 ? (rest[0] as SpanOptions) : {};
    const parent = rest.length > 2 ? (rest[1] as Context) : api.active();
    const span = this.startSpan(name, options, parent);
    return api.with(trace.setSpan(parent, span), fn as (span: Span) => ReturnType<F>, undefined, span);
  }
}

/** The context of a span's parent when valid: a span of ours is (its ids are the generator's), any other is checked. */
function validParent(span: Span | undefined): SpanContext | undefined {
  const context = span?.spanContext();
  return context && (span instanceof LeanSpan || trace.isSpanContextValid(context)) ? context : undefined;
}

const SAMPLED: SamplingResult = Object.freeze({ decision: SamplingDecision.RECORD_AND_SAMPLED });
