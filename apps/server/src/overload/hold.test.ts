import type { ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RefusalHold } from './hold.js';

/** A response that records what was written to it. */
function response(destroyed = false) {
  const written: number[] = [];
  const res = {
    destroyed,
    writableEnded: false,
    writeHead: (status: number) => void written.push(status),
    end: () => undefined,
  } as unknown as ServerResponse;
  return { res, written };
}

describe('RefusalHold', () => {
  beforeEach(() => void vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'performance'] }));
  afterEach(() => void vi.useRealTimers());

  it('sends a refusal once its hold is over (in its second half), not before', () => {
    const hold = new RefusalHold({ ms: 1000, maxSockets: 10 });
    const { res, written } = response();
    hold.answer(res, 429, {}, 'x');
    vi.advanceTimersByTime(450);
    expect(written).toEqual([]);
    expect(hold.held).toBe(1);
    vi.advanceTimersByTime(650);
    expect(written).toEqual([429]);
    expect(hold.held).toBe(0);
  });

  it('holds no longer than the answer allows (its Retry-After)', () => {
    const hold = new RefusalHold({ ms: 10_000, maxSockets: 10 });
    const { res, written } = response();
    hold.answer(res, 429, {}, 'x', 1000);
    vi.advanceTimersByTime(1100);
    expect(written).toEqual([429]);
  });

  it('sends at once when holding is off or maxSockets are held', () => {
    const off = new RefusalHold({ ms: 0, maxSockets: 10 });
    const a = response();
    off.answer(a.res, 429, {}, 'x');
    expect(a.written).toEqual([429]);
    const full = new RefusalHold({ ms: 1000, maxSockets: 1 });
    const [b, c] = [response(), response()];
    full.answer(b.res, 429, {}, 'x');
    full.answer(c.res, 429, {}, 'x');
    expect([b.written, c.written]).toEqual([[], [429]]);
  });

  it('drops a refusal whose client went away while it was held, and sends all at once on release', () => {
    const hold = new RefusalHold({ ms: 1000, maxSockets: 10 });
    const [gone, kept] = [response(true), response()];
    hold.answer(gone.res, 429, {}, 'x');
    hold.answer(kept.res, 429, {}, 'x');
    hold.release();
    expect([gone.written, kept.written]).toEqual([[], [429]]);
    expect(hold.held).toBe(0);
  });
});
