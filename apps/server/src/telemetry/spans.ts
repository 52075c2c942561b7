import {
  context,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';

/**
 * The server's own spans. With tracing off (no tracer set: the SDK not even loaded) every helper is one check and
 * runs the work as it is; with tracing on, a span is made only inside a sampled request (the active span records),
 * so unsampled requests pay for no child span either, nor for its attributes when they are given lazily.
 */
let tracer: Tracer | undefined;
let heads: RequestSampling | undefined;
/** The active context through the API's global registry: without tracing's own context manager (helpers' tests). */
const registryActive = (): Context => context.active();
/** The active context: the context manager's own, when tracing started one (sampling.active). */
let active = registryActive;

/**
 * How a request's trace begins (sdk.ts): the configured sampler decides on the request's trace id and incoming parent
 * before any span exists, so an unsampled request makes no span, context or attribute at all.
 */
export interface RequestSampling {
  /** The empty context a sampled request's contexts derive from (lean-context.ts), and incoming ones are read into. */
  readonly root: Context;
  /** A new trace id, for a request that continues no trace. */
  traceId(): string;
  /** A new span id (an unsampled request's, for its log line). */
  spanId(): string;
  /** Whether a SERVER span named `name` in trace `traceId`, continuing `parent` (ROOT_CONTEXT for none), is sampled. */
  sampled(parent: Context, traceId: string, name: string): boolean;
  /** The SERVER span of a sampled request, in trace `traceId`: the one sampled() decided on. */
  start(name: string, options: SpanOptions, parent: Context, traceId: string): Span;
  /**
   * The active context, read from the context manager tracing registered rather than through the API's global
   * registry (a lookup and a version check on every call): every traced helper asks it on every request.
   */
  readonly active: () => Context;
}

/**
 * Set when tracing starts (lifecycle/tracing.ts, and tests); undefined turns every helper back into a pass-through.
 * Without `sampling` requests get no SERVER span (helpers' tests).
 */
export function useTracer(value: Tracer | undefined, sampling?: RequestSampling): void {
  tracer = value;
  heads = value && sampling;
  active = heads ? heads.active : registryActive;
}

export function activeTracer(): Tracer | undefined {
  return tracer;
}

export function requestSampling(): RequestSampling | undefined {
  return heads;
}

/** The active span's context when it is sampled: what shared work links to. */
export function sampledContext(): SpanContext | undefined {
  if (!tracer) return undefined;
  const span = trace.getSpan(active());
  return span?.isRecording() ? span.spanContext() : undefined;
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  links?: Link[];
}

/** A span's options, or a function making them: called only for a sampled request, so others build nothing. */
export type LazySpanOptions = SpanOptions | (() => SpanOptions);

const optionsOf = (options: LazySpanOptions) => (typeof options === 'function' ? options() : options);
/** Whether the active context holds a recording span (a sampled request's work): the one case that makes spans. */
export const inSampledTrace = () => tracer !== undefined && trace.getSpan(active())?.isRecording() === true;

/**
 * Adds attributes to a recording span. The server's attributes are strings and numbers by construction, so they go
 * straight into the span's record (ReadableSpan.attributes, what the exporter reads) rather than through the SDK's
 * check of every value, which allocates on each; a span without that record gets them through setAttributes.
 */
export function addAttributes(span: Span, attributes: Attributes): void {
  const record = (span as Partial<ReadableSpan>).attributes;
  if (record) Object.assign(record, attributes);
  else span.setAttributes(attributes);
}

/**
 * Runs `work` in a child span of the active one (when sampled), ending it when the result settles; a thrown error or
 * rejection sets `error.type` (its `code`, else its class name) and the ERROR status, and passes on unchanged.
 */
export function inSpan<T>(name: string, options: LazySpanOptions, work: (span: Span | undefined) => T): T {
  if (!inSampledTrace()) return work(undefined);
  const parent = active();
  const span = tracer!.startSpan(name, optionsOf(options), parent);
  return context.with(trace.setSpan(parent, span), () => settle(span, () => work(span)));
}

/**
 * As inSpan, for work that starts no span of its own (one query or command, a cache read): its span is a child of the
 * active one but is not made active itself, which spares a context and a context switch per span.
 */
export function inLeafSpan<T>(name: string, options: LazySpanOptions, work: (span: Span | undefined) => T): T {
  if (!inSampledTrace()) return work(undefined);
  const span = tracer!.startSpan(name, optionsOf(options), active());
  return settle(span, () => work(span));
}

/** Runs `work` and ends `span` when its result settles, failed by what it threw or rejected with. */
function settle<T>(span: Span, work: () => T): T {
  const fail = (error: unknown) => {
    failed(span, error);
    span.end();
  };
  let result: T;
  try {
    result = work();
  } catch (error) {
    fail(error);
    throw error;
  }
  if (result instanceof Promise) result.then(() => span.end(), fail);
  else span.end();
  return result;
}

/**
 * One span for work shared by several requests (a coalesced query, a group commit): a child of the first sampled
 * member, so it sits in a sampled trace, linked to every sampled member. Undefined when none was sampled.
 */
export function sharedSpan(
  name: string,
  members: (SpanContext | undefined)[],
  lazyOptions: LazySpanOptions,
): Span | undefined {
  if (!tracer) return undefined;
  const sampled = members.filter((member): member is SpanContext => member !== undefined);
  const [first] = sampled;
  if (!first) return undefined;
  const options = optionsOf(lazyOptions);
  return tracer.startSpan(
    name,
    { ...options, links: [...(options.links ?? []), ...sampled.map((member) => ({ context: member }))] },
    trace.setSpanContext(active(), first),
  );
}

/** Ends a span with the outcome of its work: failed when `error` is given. */
export function endSpan(span: Span | undefined, error?: unknown): void {
  if (!span) return;
  if (error !== undefined) failed(span, error);
  span.end();
}

export function failed(span: Span, error: unknown): void {
  const code = (error as { code?: unknown } | undefined)?.code;
  const type = typeof code === 'string' ? code : error instanceof Error ? error.constructor.name : '_OTHER';
  addAttributes(span, { 'error.type': type });
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
}

export { SpanKind };
