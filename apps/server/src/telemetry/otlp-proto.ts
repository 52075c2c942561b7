/**
 * Spans as an OTLP ExportTraceServiceRequest in protobuf, the bytes @opentelemetry/otlp-transformer's
 * ProtobufTraceSerializer writes (same fields, same order, same canonical lengths; otlp-proto.test.ts compares them on
 * every kind of field), written in one pass instead of two: a span's ids go from hex straight into the buffer rather
 * than through a new array each, twice, and a long string is measured and written by Buffer's native UTF-8 code rather
 * than by a loop per character. The exporter (otlp-exporter.ts) keeps the official transport around it.
 *
 * Messages (opentelemetry-proto, trace/v1 and common/v1) by field number:
 * - ExportTraceServiceRequest: 1 resource_spans.
 * - ResourceSpans: 1 resource, 2 scope_spans, 3 schema_url. Resource: 1 attributes, 2 dropped_attributes_count.
 * - ScopeSpans: 1 scope, 2 spans, 3 schema_url. InstrumentationScope: 1 name, 2 version, 3 attributes, 4 dropped.
 * - Span: 1 trace_id, 2 span_id, 3 trace_state, 4 parent_span_id, 5 name, 6 kind, 7 start, 8 end (fixed64 ns),
 *   9 attributes, 10 dropped_attributes_count, 11 events, 12 dropped_events_count, 13 links, 14 dropped_links_count,
 *   15 status, 16 flags (fixed32).
 * - Event: 1 time, 2 name, 3 attributes, 4 dropped. Link: 1 trace_id, 2 span_id, 3 trace_state, 4 attributes,
 *   5 dropped, 6 flags. Status: 2 message, 3 code.
 * - KeyValue: 1 key, 2 value. AnyValue: 1 string, 2 bool, 3 int, 4 double, 5 array, 6 kvlist, 7 bytes.
 */
import type { Attributes, Link, SpanContext } from '@opentelemetry/api';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace';
import { FIXED32, FIXED64, VARINT, Writer } from './protobuf-writer.js';

/** W3C flags in the span's `flags`: the context's trace flags, and whether its parent is remote (known, then set). */
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;
const flagsOf = (traceFlags: number, remote: boolean | undefined) =>
  (traceFlags & 0xff) | HAS_IS_REMOTE | (remote ? IS_REMOTE : 0);

function attributes(w: Writer, field: number, attrs: Attributes): void {
  for (const key in attrs) {
    if (!Object.prototype.hasOwnProperty.call(attrs, key)) continue;
    const at = w.open(field);
    keyValue(w, key, attrs[key]);
    w.close(at);
  }
}

function keyValue(w: Writer, key: string, value: unknown): void {
  w.string(1, key);
  const at = w.open(2);
  anyValue(w, value);
  w.close(at);
}

const MIN_INT64 = -(2 ** 63);
const MAX_INT64 = 2 ** 63;

/** An AnyValue's content; a value of no OTLP kind (undefined, a function) as an empty one, as the official writer does. */
function anyValue(w: Writer, value: unknown): void {
  switch (typeof value) {
    case 'string':
      return w.string(1, value);
    case 'boolean':
      w.tag(2, VARINT);
      return w.varint(value ? 1 : 0);
    case 'number':
      if (Number.isInteger(value) && value >= MIN_INT64 && value < MAX_INT64) {
        w.tag(3, VARINT);
        return w.varint(value);
      }
      w.tag(4, FIXED64);
      return w.double(value);
  }
  if (value instanceof Uint8Array) return w.bytes(7, value);
  if (Array.isArray(value)) {
    const list = w.open(5);
    for (const item of value as unknown[]) {
      const at = w.open(1);
      anyValue(w, item);
      w.close(at);
    }
    return w.close(list);
  }
  if (typeof value === 'object' && value !== null) {
    const list = w.open(6);
    const record = value as Record<string, unknown>;
    for (const key in record) {
      if (!Object.prototype.hasOwnProperty.call(record, key)) continue;
      const at = w.open(1);
      keyValue(w, key, record[key]);
      w.close(at);
    }
    w.close(list);
  }
}

function event(w: Writer, e: TimedEvent): void {
  const at = w.open(11);
  w.tag(1, FIXED64);
  w.time(e.time);
  w.string(2, e.name);
  if (e.attributes) attributes(w, 3, e.attributes);
  w.tag(4, VARINT);
  w.varint(e.droppedAttributesCount ?? 0);
  w.close(at);
}

function link(w: Writer, l: Link): void {
  const at = w.open(13);
  const { context } = l;
  w.id(1, context.traceId);
  w.id(2, context.spanId);
  const state = context.traceState?.serialize();
  if (state) w.string(3, state);
  if (l.attributes) attributes(w, 4, l.attributes);
  w.tag(5, VARINT);
  w.varint(l.droppedAttributesCount ?? 0);
  w.tag(6, FIXED32);
  w.fixed32(flagsOf(context.traceFlags, context.isRemote));
  w.close(at);
}

function span(w: Writer, s: ReadableSpan): void {
  const at = w.open(2);
  const context: SpanContext = s.spanContext();
  const parent = s.parentSpanContext;
  w.id(1, context.traceId);
  w.id(2, context.spanId);
  const state = context.traceState?.serialize();
  if (state) w.string(3, state);
  if (parent?.spanId) w.id(4, parent.spanId);
  w.string(5, s.name);
  // The API's SpanKind counts from INTERNAL = 0; the protocol's from UNSPECIFIED = 0.
  const kind = s.kind == null ? 0 : s.kind + 1;
  if (kind !== 0) {
    w.tag(6, VARINT);
    w.varint(kind);
  }
  w.tag(7, FIXED64);
  w.time(s.startTime);
  w.tag(8, FIXED64);
  w.time(s.endTime);
  if (s.attributes) attributes(w, 9, s.attributes);
  w.tag(10, VARINT);
  w.varint(s.droppedAttributesCount);
  for (const e of s.events) event(w, e);
  w.tag(12, VARINT);
  w.varint(s.droppedEventsCount);
  for (const l of s.links) link(w, l);
  w.tag(14, VARINT);
  w.varint(s.droppedLinksCount);
  const status = w.open(15);
  if (s.status.message) w.string(2, s.status.message);
  w.tag(3, VARINT);
  w.varint(s.status.code);
  w.close(status);
  w.tag(16, FIXED32);
  w.fixed32(flagsOf(context.traceFlags, parent?.isRemote));
  w.close(at);
}

/** The scope as the SDK may hold it: attributes are newer than the API's type (the official writer reads them too). */
type Scope = ReadableSpan['instrumentationScope'] & { attributes?: Attributes; droppedAttributesCount?: number };
type Resource = ReadableSpan['resource'];

/** The spans by resource, then by instrumentation scope (by identity, in the order first seen, as the official one). */
function grouped(spans: ReadableSpan[]): Map<Resource, Map<Scope, ReadableSpan[]>> {
  const resources = new Map<Resource, Map<Scope, ReadableSpan[]>>();
  for (const s of spans) {
    let scopes = resources.get(s.resource);
    if (!scopes) resources.set(s.resource, (scopes = new Map<Scope, ReadableSpan[]>()));
    let list = scopes.get(s.instrumentationScope);
    if (!list) scopes.set(s.instrumentationScope, (list = []));
    list.push(s);
  }
  return resources;
}

/**
 * One writer for every export: encoding is synchronous, and each request gets a copy of exactly its bytes (the
 * transport may still send or retry them while the next batch is written).
 */
const writer = new Writer();

/** The ExportTraceServiceRequest of `spans`, in protobuf. */
export function encodeSpans(spans: ReadableSpan[]): Uint8Array {
  const w = writer;
  w.pos = 0;
  for (const [resource, scopes] of grouped(spans)) {
    const resourceSpans = w.open(1);
    const res = w.open(1);
    attributes(w, 1, resource.attributes);
    w.tag(2, VARINT);
    w.varint(0);
    w.close(res);
    for (const [scope, list] of scopes) {
      const scopeSpans = w.open(2);
      const sc = w.open(1);
      w.string(1, scope.name);
      if (scope.version) w.string(2, scope.version);
      if (scope.attributes) attributes(w, 3, scope.attributes);
      if (scope.droppedAttributesCount) {
        w.tag(4, VARINT);
        w.varint(scope.droppedAttributesCount);
      }
      w.close(sc);
      for (const s of list) span(w, s);
      if (scope.schemaUrl) w.string(3, scope.schemaUrl);
      w.close(scopeSpans);
    }
    if (resource.schemaUrl) w.string(3, resource.schemaUrl);
    w.close(resourceSpans);
  }
  return w.take();
}
