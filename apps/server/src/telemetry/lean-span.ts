import {
  type Attributes,
  type AttributeValue,
  type Exception,
  type HrTime,
  type Link,
  type Span,
  type SpanAttributes,
  type SpanContext,
  type SpanKind,
  type SpanStatus,
  SpanStatusCode,
  type TimeInput,
} from '@opentelemetry/api';
import {
  addHrTimes,
  cleanAttributes,
  cleanSimpleAttributes,
  hrTimeDuration,
  type InstrumentationScope,
  isAnyValue,
  isTimeInput,
  millisToHrTime,
  timeInputToHrTime,
} from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanProcessor, TimedEvent } from '@opentelemetry/sdk-trace';

const UNSET: SpanStatus = Object.freeze({ code: SpanStatusCode.UNSET });
// A span's events and links are replaced, never pushed to, so one empty array serves every span without any.
const NO_EVENTS: TimedEvent[] = Object.freeze([]) as never;
export const NO_LINKS: Link[] = Object.freeze([]) as never;

/**
 * A span of the lean tracer (lean-tracer.ts): one object holding what the exporters read (ReadableSpan), its times as
 * numbers until they are read, by the SDK's rules for what a span keeps and when it changes.
 */
export class LeanSpan implements Span, ReadableSpan {
  parentSpanContext: SpanContext | undefined;
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
    readonly attributes: Attributes,
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
    if (this.elapsedMs < 0 && key.length > 0 && isAnyValue(value)) this.attributes[key] = copyOf(value);
    return this;
  }

  setAttributes(attributes: SpanAttributes): this {
    for (const key of Object.keys(attributes)) this.setAttribute(key, attributes[key]);
    return this;
  }

  addEvent(name: string, attributesOrTime?: SpanAttributes | TimeInput, time?: TimeInput): this {
    if (this.elapsedMs >= 0) return this;
    const timed = isTimeInput(attributesOrTime);
    const at = timed ? attributesOrTime : time;
    const event: TimedEvent = {
      name,
      time: at === undefined ? addHrTimes(this.startTime, millisToHrTime(this.sinceStart())) : timeInputToHrTime(at),
      ...cleanSimpleAttributes(timed ? undefined : attributesOrTime, NO_LIMITS),
    };
    this.events = [...this.events, event];
    return this;
  }

  addLink(link: Link): this {
    if (this.elapsedMs < 0) this.links = [...this.links, ownLink(link)];
    return this;
  }

  addLinks(links: Link[]): this {
    if (this.elapsedMs < 0) this.links = [...this.links, ...links.map(ownLink)];
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

/**
 * A span's own copy of the attributes it starts with, as the SDK keeps them: values it would drop left out, lists and
 * maps copied so the caller's later changes do not reach the span. The common case, single values, is one clone.
 */
export function kept(attributes: SpanAttributes): Attributes {
  const copy: Attributes = { ...attributes };
  for (const key in copy) {
    const value = copy[key];
    if (key.length > 0 && (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'))
      continue;
    if (key.length > 0 && isAnyValue(value)) copy[key] = copyOf(value);
    else delete copy[key];
  }
  return copy;
}

/** The SDK's limits are not applied (lean-tracer.ts); its cleaning of event and link attributes is. */
const NO_LIMITS = { attributeCountLimit: Infinity, attributeValueLengthLimit: Infinity };

/** A span's own copy of a link, as the SDK's Tracer makes it. */
export const ownLink = ({ context, attributes }: Link): Link => ({
  context,
  ...cleanAttributes(attributes, NO_LIMITS),
});

const copyOf = <T>(value: T): T => (typeof value === 'object' && value !== null ? structuredClone(value) : value);
