/**
 * The lean context against the API's own (BaseContext, what ROOT_CONTEXT derives): the same operations give the same
 * values, every context keeps its own values whatever is derived from it, and a long chain lets replaced values go.
 */
import { type Context, createContextKey, defaultTextMapGetter, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { collector } from '../../test/collector.js';
import { LEAN_ROOT, LeanContext } from './lean-context.js';

const KEYS = ['a', 'b', 'c', 'd'].map((name) => createContextKey(`lean-context test ${name}`));

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const valuesOf = (ctx: Context) => KEYS.map((key) => ctx.getValue(key));

describe('LeanContext', () => {
  it('reads what BaseContext reads after the same sets and deletes, each context unchanged by later ones', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const next = random(seed);
      // A base with a value of its own (as an extracted parent is), so deletes of a base value are covered.
      const base = ROOT_CONTEXT.setValue(KEYS[0]!, 'from base');
      const pairs: [Context, Context][] = [[base, LeanContext.over(base)]];
      for (let step = 0; step < 120; step++) {
        const [official, lean] = pairs[Math.floor(next() * pairs.length)]!;
        const key = KEYS[Math.floor(next() * KEYS.length)]!;
        const pair: [Context, Context] =
          next() < 0.25
            ? [official.deleteValue(key), lean.deleteValue(key)]
            : ([official, lean].map((c) => c.setValue(key, step)) as [Context, Context]);
        pairs.push(pair);
      }
      for (const [official, lean] of pairs) expect(valuesOf(lean)).toEqual(valuesOf(official));
    }
  });

  it('keeps a value set long ago, past the depth that flattens the chain', () => {
    let ctx = LEAN_ROOT.setValue(KEYS[0]!, 'first');
    for (let i = 0; i < 100; i++) ctx = ctx.setValue(KEYS[1]!, i).deleteValue(KEYS[2]!);
    expect(valuesOf(ctx)).toEqual(['first', 99, undefined, undefined]);
  });

  it('carries spans and an incoming parent as the API reads them', () => {
    const propagator = new W3CTraceContextPropagator();
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const incoming = propagator.extract(LEAN_ROOT, { traceparent }, defaultTextMapGetter);
    expect(trace.getSpanContext(incoming)).toMatchObject({ spanId: '00f067aa0ba902b7', isRemote: true });
    const child = trace.setSpanContext(incoming, {
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: 'aaaaaaaaaaaaaaaa',
      traceFlags: 1,
    });
    expect(trace.getSpanContext(child)?.spanId).toBe('aaaaaaaaaaaaaaaa');
    expect(trace.getSpanContext(trace.deleteSpan(child))).toBeUndefined();
    expect(trace.getSpanContext(incoming)?.spanId).toBe('00f067aa0ba902b7');
    expect(trace.getSpan(LEAN_ROOT)).toBeUndefined();
  });

  describe('a value replaced in a long chain', () => {
    let gc: () => void;
    beforeAll(() => {
      gc = collector();
    });

    it('is not kept alive by the contexts derived after it', async () => {
      let ctx: Context = LEAN_ROOT;
      const replaced = (() => {
        const value = { big: new Array(1000).fill(0) };
        ctx = ctx.setValue(KEYS[0]!, value);
        return new WeakRef(value);
      })();
      for (let i = 0; i < 100; i++) ctx = ctx.setValue(KEYS[0]!, { i });
      await new Promise((resolve) => setImmediate(resolve));
      gc();
      expect(replaced.deref()).toBeUndefined();
      expect(ctx.getValue(KEYS[0]!)).toEqual({ i: 99 });
    });
  });
});
