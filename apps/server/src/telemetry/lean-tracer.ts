import {
  type Attributes,
  type AttributeValue,
  context as api,
  type Context,
  type Exception,
  type HrTime,
  type Link,
  type Span,
  type SpanAttributes,
  type SpanContext,
  SpanKind,
  type SpanOptions,
  type SpanStatus,
  SpanStatusCode,
  type TimeInput,
  trace,
  TraceFlags,
  type Tracer,
} from '@opentelemetry/api';
import {
  addHrTimes,
  hrTimeDuration,
  type InstrumentationScope,
  isAnyValue,
  isAttributeValue,
  isTracingSuppressed,
  millisToHrTime,
  timeInputToHrTime,
} from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import {
  type IdGenerator,
  type ReadableSpan,
  type Sampler,
  SamplingDecision,
  type SpanProcessor,
  type TimedEvent,
} from '@opentelemetry/sdk-trace';

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
 * strings and numbers); any other value is left out, as the SDK leaves it out. What is not kept: the SDK's attribute-count and length limits and
 * its `otel.sdk.span.*` metrics (which nothing reads here); events and links are not limited either, since the server
 * adds none after a span starts.
 */
export class LeanTracer implements Tracer {
  constructor(
    private readonly sampler: Sampler,
    private readonly ids: IdGenerator,
    private readonly processor: SpanProcessor,
    private readonly resource: Resource,
    private readonly scope: InstrumentationScope,
  ) {}

  startSpan(name: string, options: SpanOptions = {}, ctx: Context = api.active()): Span {
    const parent = options.root ? undefined : trace.getSpanContext(ctx);
    const valid = parent !== undefined && trace.isSpanContextValid(parent);
    return this.startIn(name, options, ctx, valid ? parent.traceId : this.ids.generateTraceId());
  }

  /** A span in trace `traceId` (a request's, decided before its span exists); its parent is `ctx`'s span, if any. */
  startIn(name: string, options: SpanOptions, ctx: Context, traceId: string): Span {
    if (options.root) ctx = trace.deleteSpan(ctx);
    const spanId = this.ids.generateSpanId();
    if (isTracingSuppressed(ctx)) return trace.wrapSpanContext({ traceId, spanId, traceFlags: TraceFlags.NONE });
    const parent = trace.getSpanContext(ctx);
    const valid = parent !== undefined && trace.isSpanContextValid(parent) && parent.traceId === traceId;
    const kind = options.kind ?? SpanKind.INTERNAL;
    const links = options.links ?? NO_LINKS;
    const result = this.sampler.shouldSample(ctx, traceId, name, kind, options.attributes ?? {}, links);
    const spanContext: SpanContext = {
      traceId,
      spanId,
      traceFlags: result.decision === SamplingDecision.RECORD_AND_SAMPLED ? TraceFlags.SAMPLED : TraceFlags.NONE,
      traceState: result.traceState ?? (valid ? parent.traceState : undefined),
    };
    if (result.decision === SamplingDecision.NOT_RECORD) return trace.wrapSpanContext(spanContext);
    const span = new LeanSpan(this.processor, this.resource, this.scope, spanContext, name, kind, links);
    if (valid) span.parentSpanContext = parent;
    if (options.attributes) span.setAttributes(options.attributes);
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

const UNSET: SpanStatus = Object.freeze({ code: SpanStatusCode.UNSET });
// A span's events and links are replaced, never pushed to, so one empty array serves every span without any.
const NO_EVENTS: TimedEvent[] = Object.freeze([]) as never;
const NO_LINKS: Link[] = Object.freeze([]) as never;

export class LeanSpan implements Span, ReadableSpan {
  parentSpanContext: SpanContext | undefined;
  readonly attributes: Attributes = {};
  events: TimedEvent[] = NO_EVENTS;
  status: SpanStatus = UNSET;
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  /** The start as the SDK takes it: the wall clock (ms), and the monotonic clock to measure the duration from. */
  private readonly startMs = Date.now();
  private readonly startMonotonic = performance.now();
  /** Milliseconds from the start to the end; -1 while the span runs. */
  private elapsedMs = -1;
  /** An explicit start or end time (SpanOptions.startTime, end(time)), as given: then the times are those. */
  private explicit: { start?: HrTime; end?: HrTime } | undefined;

  constructor(
    private readonly processor: SpanProcessor,
    readonly resource: Resource,
    readonly instrumentationScope: InstrumentationScope,
    private readonly context: SpanContext,
    public name: string,
    readonly kind: SpanKind,
    public links: Link[],
  ) {}

  startAt(time: TimeInput): void {
    this.explicit = { start: timeInputToHrTime(time) };
  }

  spanContext(): SpanContext {
    return this.context;
  }

  get startTime(): HrTime {
    return this.explicit?.start ?? millisToHrTime(this.startMs);
  }

  get endTime(): HrTime {
    if (this.explicit?.end) return this.explicit.end;
    if (this.elapsedMs < 0) return [0, 0];
    return this.explicit?.start
      ? millisToHrTime(this.startMs + this.elapsedMs)
      : addHrTimes(this.startTime, millisToHrTime(this.elapsedMs));
  }

  get duration(): HrTime {
    return this.elapsedMs < 0 ? [-1, -1] : hrTimeDuration(this.startTime, this.endTime);
  }

  get ended(): boolean {
    return this.elapsedMs >= 0;
  }

  isRecording(): boolean {
    return this.elapsedMs < 0;
  }

  setAttribute(key: string, value?: AttributeValue): this {
    if (this.elapsedMs >= 0 || key.length === 0 || !isAnyValue(value)) return this;
    // A list or map is copied, as the SDK copies it, so the caller's later changes do not reach the span.
    this.attributes[key] = typeof value === 'object' && value !== null ? structuredClone(value) : value;
    return this;
  }

  setAttributes(attributes: SpanAttributes): this {
    for (const key of Object.keys(attributes)) this.setAttribute(key, attributes[key]);
    return this;
  }

  addEvent(name: string, attributesOrTime?: SpanAttributes | TimeInput, time?: TimeInput): this {
    if (this.elapsedMs >= 0) return this;
    const timed = isTime(attributesOrTime);
    const at = timed ? attributesOrTime : time;
    const event: TimedEvent = {
      name,
      time: at === undefined ? addHrTimes(this.startTime, millisToHrTime(this.sinceStart())) : timeInputToHrTime(at),
      ...simpleValuesOf(timed ? undefined : attributesOrTime),
    };
    this.events = [...this.events, event];
    return this;
  }

  addLink(link: Link): this {
    if (this.elapsedMs < 0) this.links = [...this.links, link];
    return this;
  }

  addLinks(links: Link[]): this {
    if (this.elapsedMs < 0) this.links = [...this.links, ...links];
    return this;
  }

  setStatus(status: SpanStatus): this {
    if (this.elapsedMs >= 0 || status.code === SpanStatusCode.UNSET || this.status.code === SpanStatusCode.OK)
      return this;
    this.status =
      status.code === SpanStatusCode.ERROR && typeof status.message === 'string'
        ? { code: status.code, message: status.message }
        : { code: status.code };
    return this;
  }

  updateName(name: string): this {
    if (this.elapsedMs < 0) this.name = name;
    return this;
  }

  end(endTime?: TimeInput): void {
    if (this.elapsedMs >= 0) return;
    if (endTime !== undefined) this.explicit = { ...this.explicit, end: timeInputToHrTime(endTime) };
    this.elapsedMs = Math.max(0, this.sinceStart());
    this.processor.onEnding?.(this);
    this.processor.onEnd(this);
  }

  recordException(exception: Exception, time?: TimeInput): void {
    const attributes: Attributes = {};
    if (typeof exception === 'string') attributes['exception.message'] = exception;
    else {
      if (exception.code) attributes['exception.type'] = String(exception.code);
      else if (exception.name) attributes['exception.type'] = exception.name;
      if (exception.message) attributes['exception.message'] = exception.message;
      if (exception.stack) attributes['exception.stacktrace'] = exception.stack;
    }
    if (attributes['exception.type'] || attributes['exception.message']) this.addEvent('exception', attributes, time);
  }

  private sinceStart(): number {
    return performance.now() - this.startMonotonic;
  }
}

/** An event's attributes as the SDK keeps them: only single values and lists of them, the others counted as dropped. */
function simpleValuesOf(attributes: SpanAttributes | undefined) {
  const kept: Attributes = {};
  let dropped = 0;
  for (const key of Object.keys(attributes ?? {})) {
    const value = attributes![key];
    if (key && isAttributeValue(value)) kept[key] = Array.isArray(value) ? [...value] : value;
    else if (value !== undefined) dropped++;
  }
  return { attributes: kept, droppedAttributesCount: dropped };
}

const isTime = (value: unknown): value is TimeInput =>
  typeof value === 'number' || value instanceof Date || (Array.isArray(value) && value.length === 2);
