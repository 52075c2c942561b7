/** The ids of the server's spans: hex of the sizes W3C trace context gives, random, never all zero. */
import { trace } from '@opentelemetry/api';
import { expect, it } from 'vitest';
import { RandomIds } from './random-ids.js';

it('makes valid, distinct trace and span ids across many refills of its pool', () => {
  const ids = new RandomIds();
  const traces = new Set<string>();
  const spans = new Set<string>();
  for (let i = 0; i < 5_000; i++) {
    const traceId = ids.generateTraceId();
    const spanId = ids.generateSpanId();
    expect(trace.isSpanContextValid({ traceId, spanId, traceFlags: 1 })).toBe(true);
    traces.add(traceId);
    spans.add(spanId);
  }
  expect(traces.size).toBe(5_000);
  expect(spans.size).toBe(5_000);
  // Every hex digit appears in every place of a trace id (not a counter, not a constant prefix).
  for (let place = 0; place < 32; place++) expect(new Set([...traces].map((id) => id[place])).size).toBe(16);
});

it('never returns an all-zero id, the invalid one', () => {
  const fills: number[] = [0, 0xab];
  const ids = new RandomIds((buffer) => buffer.fill(fills.shift() ?? 0xcd));
  expect(ids.generateSpanId()).toBe('ab'.repeat(8));
  expect(fills).toEqual([]);
  expect(ids.generateTraceId()).toBe('ab'.repeat(16));
});
