import {
  context,
  type Attributes,
  type Link,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from '@opentelemetry/api';

/**
 * The server's own spans. With tracing off (no tracer set: the SDK not even loaded) every helper is one check and
 * runs the work as it is; with tracing on, a span is made only inside a sampled request (the active span records),
 * so unsampled requests pay for no child span either.
 */
let tracer: Tracer | undefined;

/** Set by main.ts when tracing starts (and by tests); undefined turns every helper back into a pass-through. */
export function useTracer(value: Tracer | undefined): void {
  tracer = value;
}

export function activeTracer(): Tracer | undefined {
  return tracer;
}

/** The active span's context when it is sampled: what shared work links to. */
export function sampledContext(): SpanContext | undefined {
  if (!tracer) return undefined;
  const span = trace.getActiveSpan();
  return span?.isRecording() ? span.spanContext() : undefined;
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  links?: Link[];
}

/**
 * Runs `work` in a child span of the active one (when sampled), ending it when the result settles; a thrown error or
 * rejection sets `error.type` (its `code`, else its class name) and the ERROR status, and passes on unchanged.
 */
export function inSpan<T>(name: string, options: SpanOptions, work: (span: Span | undefined) => T): T {
  if (!tracer || !trace.getActiveSpan()?.isRecording()) return work(undefined);
  return tracer.startActiveSpan(name, options, (span) => {
    let result: T;
    try {
      result = work(span);
    } catch (error) {
      failed(span, error);
      span.end();
      throw error;
    }
    if (result instanceof Promise) {
      result.then(
        () => span.end(),
        (error: unknown) => {
          failed(span, error);
          span.end();
        },
      );
    } else {
      span.end();
    }
    return result;
  });
}

/**
 * One span for work shared by several requests (a coalesced query, a group commit): a child of the first sampled
 * member, so it sits in a sampled trace, linked to every sampled member. Undefined when none was sampled.
 */
export function sharedSpan(name: string, members: (SpanContext | undefined)[], options: SpanOptions): Span | undefined {
  if (!tracer) return undefined;
  const sampled = members.filter((member): member is SpanContext => member !== undefined);
  const [first] = sampled;
  if (!first) return undefined;
  return tracer.startSpan(
    name,
    { ...options, links: [...(options.links ?? []), ...sampled.map((member) => ({ context: member }))] },
    trace.setSpanContext(context.active(), first),
  );
}

/** Ends a shared span with the outcome of its work. */
export function endShared(span: Span | undefined, error?: unknown): void {
  if (!span) return;
  if (error !== undefined) failed(span, error);
  span.end();
}

export function failed(span: Span, error: unknown): void {
  const code = (error as { code?: unknown } | undefined)?.code;
  const type = typeof code === 'string' ? code : error instanceof Error ? error.constructor.name : '_OTHER';
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
}

export { SpanKind };
