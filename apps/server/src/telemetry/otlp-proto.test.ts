/**
 * Our protobuf encoding of spans against the official one (@opentelemetry/otlp-transformer's ProtobufTraceSerializer,
 * what @opentelemetry/exporter-trace-otlp-proto sends): the same bytes for spans made by the real SDK and for spans
 * with every kind of field and value the protocol carries, lengths that need two and three bytes, several resources
 * and scopes. Equal bytes mean any receiver reads exactly what it would read from the official exporter.
 */
import { ROOT_CONTEXT, type Link, SpanKind, SpanStatusCode, trace, TraceFlags } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, type ReadableSpan, type SpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { encodeSpans } from './otlp-proto.js';
import { Writer } from './protobuf-writer.js';

const official = (spans: ReadableSpan[]) => Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!);
const ours = (spans: ReadableSpan[]) => Buffer.from(encodeSpans(spans));

/** Spans ended by a real provider, kept as the batch processor would hand them to the exporter. */
function recorder(resourceAttributes: Record<string, string | number> = { 'service.name': 'otlp-proto-test' }) {
  const ended: ReadableSpan[] = [];
  const processor: SpanProcessor = {
    onStart: () => {},
    onEnd: (span) => ended.push(span),
    forceFlush: async () => {},
    shutdown: async () => {},
  };
  const provider = new TracerProvider({
    resource: resourceFromAttributes(resourceAttributes),
    sampler: new AlwaysOnSampler(),
    spanProcessors: [processor],
  });
  return { provider, ended };
}

const id = (n: number, bytes: number) => n.toString(16).padStart(bytes * 2, '0');

/** A request's spans as the server makes them: a SERVER span, children, a shared span linked to two requests. */
function requestSpans(tracer: ReturnType<TracerProvider['getTracer']>, n: number) {
  const parent = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: id(n + 1, 16),
    spanId: id(n + 7, 8),
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
    traceState: new TraceState('vendor=a1,other=b2'),
  });
  const server = tracer.startSpan('GET /v1/pets', { kind: SpanKind.SERVER }, parent);
  server.setAttributes({
    'http.request.method': 'GET',
    'url.path': `/v1/pets/${n}`,
    'server.port': 3000,
    'http.response.status_code': 200,
  });
  const active = trace.setSpan(parent, server);
  const child = tracer.startSpan('SELECT Pet', { kind: SpanKind.CLIENT }, active);
  child.setAttributes({
    'db.system.name': 'sqlite',
    'db.query.text': `SELECT * FROM "Pet" WHERE id > ? ${'x'.repeat(n)}`,
  });
  child.addEvent('retry', { attempt: 2 });
  child.setStatus({ code: SpanStatusCode.ERROR, message: 'SQLITE_BUSY' });
  child.end();
  const links: Link[] = [
    { context: server.spanContext(), attributes: { member: n } },
    { context: server.spanContext() },
  ];
  const shared = tracer.startSpan('group commit', { links }, active);
  shared.end();
  server.end();
}

describe('encodeSpans', () => {
  it('writes the bytes the official serializer writes for spans of the real SDK', () => {
    const { provider, ended } = recorder();
    const tracer = provider.getTracer('@animal-store/server', '1.2.3');
    for (let n = 0; n < 40; n++) requestSpans(tracer, n * 7);
    // A root span with no parent and the INTERNAL kind (0 in the API, 1 in the protocol).
    tracer.startSpan('root').end();
    expect(ended).toHaveLength(40 * 3 + 1);
    expect(ours(ended)).toEqual(official(ended));
    expect(ours(ended.slice(0, 1))).toEqual(official(ended.slice(0, 1)));
  });

  it('writes every kind of attribute value as the official serializer does', () => {
    const { provider, ended } = recorder({ 'service.name': 'å∂ƒ', 'process.pid': 4242 });
    const span = provider.getTracer('scope').startSpan('kinds');
    // Straight into the record: setAttributes would drop what the API does not allow (nested objects, undefined).
    Object.assign((span as unknown as ReadableSpan).attributes, {
      ascii: 'plain',
      long: 'l'.repeat(300),
      twoBytes: 'ñandú '.repeat(30),
      astral: 'pets 🐈🐕',
      lone: 'a\uD800b',
      loneLow: '\uDC00',
      empty: '',
      yes: true,
      no: false,
      zero: 0,
      small: 127,
      large: 2 ** 40 + 3,
      negative: -5,
      minInt: -(2 ** 63),
      beyondInt: 2 ** 63,
      fraction: 1.5,
      nan: Number.NaN,
      infinite: Number.NEGATIVE_INFINITY,
      strings: ['a', 'bé', ''],
      numbers: [1, -2, 3.25],
      mixed: [true, 'x', 7, null],
      nested: { inner: 'v', deeper: { n: 1 } },
      bytes: new Uint8Array([0, 1, 255]),
      nothing: undefined,
      [`key-${'k'.repeat(200)}`]: 'a long key',
    });
    span.end();
    expect(ours(ended)).toEqual(official(ended));
  });

  it('uses two- and three-byte lengths where the messages need them', () => {
    const { provider, ended } = recorder();
    const tracer = provider.getTracer('sizes');
    for (const size of [126, 127, 128, 129, 16_383, 16_384, 70_000]) {
      const span = tracer.startSpan(`size ${size}`);
      span.setAttribute('payload', 'p'.repeat(size));
      span.end();
    }
    // One request far larger than the writer's first buffer (64 KiB).
    for (let n = 0; n < 600; n++) tracer.startSpan(`span ${n}`, { attributes: { n } }).end();
    expect(ours(ended)).toEqual(official(ended));
  });

  it('groups spans by resource and scope in the order first seen, as the official serializer does', () => {
    const a = recorder({ 'service.name': 'a' });
    const b = recorder({ 'service.name': 'b' });
    const spans: ReadableSpan[] = [];
    for (const [provider, scope, version] of [
      [a.provider, 'one', undefined],
      [b.provider, 'two', '2.0.0'],
      [a.provider, 'three', '3.0.0'],
      [a.provider, 'one', undefined],
    ] as const) {
      provider
        .getTracer(scope, version, {
          schemaUrl: scope === 'two' ? 'https://opentelemetry.io/schemas/1.30.0' : undefined,
        })
        .startSpan(scope)
        .end();
    }
    spans.push(...a.ended.slice(0, 1), ...b.ended, ...a.ended.slice(1));
    expect(ours(spans)).toEqual(official(spans));
  });

  it('returns its own copy of the bytes: a second request does not change the first', () => {
    const { provider, ended } = recorder();
    provider.getTracer('copies').startSpan('first').end();
    const first = encodeSpans(ended.slice(0, 1));
    const before = Buffer.from(first);
    provider.getTracer('copies').startSpan('second, with a longer name').end();
    encodeSpans(ended.slice(1));
    expect(Buffer.from(first)).toEqual(before);
    expect(encodeSpans([]).length).toBe(0);
  });

  it('lets go of a buffer grown past a mebibyte once its bytes are taken', () => {
    const writer = new Writer();
    const initial = writer.buf.length;
    writer.string(1, 'x'.repeat(3 * 1024 * 1024));
    expect(writer.buf.length).toBeGreaterThan(3 * 1024 * 1024);
    const bytes = writer.take();
    expect(bytes.length).toBe(1 + 4 + 3 * 1024 * 1024);
    expect(writer.buf.length).toBe(initial);
    expect(writer.pos).toBe(0);
    writer.string(1, 'y'.repeat(100_000));
    writer.take();
    expect(writer.buf.length).toBeGreaterThan(initial);
  });

  it('writes two-byte tags for fields from 16 on', () => {
    const writer = new Writer();
    const at = writer.open(16);
    writer.string(20, 'ab');
    writer.close(at);
    expect([...writer.take()]).toEqual([0x82, 0x01, 5, 0xa2, 0x01, 2, 0x61, 0x62]);
  });
});
