import { describe, expect, it } from 'vitest';
import { TEST_BAN } from './test-utils/ban.js';
import { rateLimitErrorBody, rateLimitHeaders } from './headers.js';
import { createLimiter } from './limiter.js';
import { createMemoryStore } from './memory-store.js';
import { MINUTE_MS } from './windows.js';
import { createResilientStore } from './resilient-store.js';

const T = Date.UTC(2024, 4, 15, 12, 0, 0);

describe('limiter', () => {
  const limiter = createLimiter({ store: createMemoryStore({ now: () => T }), ban: TEST_BAN });

  it('validates keys and windows', async () => {
    await expect(limiter.consume('', [{ name: 'm', limit: 1, windowMs: MINUTE_MS }])).rejects.toThrow(RangeError);
    await expect(limiter.consume('k', [])).rejects.toThrow(RangeError);
    await expect(limiter.consume('k', [{ name: 'm', limit: -1, windowMs: MINUTE_MS }])).rejects.toThrow(RangeError);
    await expect(limiter.consume('k', [{ name: 'm', limit: 1, windowMs: 0 }])).rejects.toThrow(RangeError);
    await expect(
      limiter.consume('k', [
        { name: 'a', limit: 1, windowMs: MINUTE_MS },
        { name: 'b', limit: 2, windowMs: MINUTE_MS },
      ]),
    ).rejects.toThrow(/same length/);
  });

  it('resolves the ban policy', () => {
    expect(limiter.ban).toEqual(TEST_BAN);
    const store = createMemoryStore();
    expect(createLimiter({ store, ban: false }).ban).toBeNull();
    expect(createLimiter({ store, ban: { ...TEST_BAN, durationMs: 1000 } }).ban).toEqual({
      ...TEST_BAN,
      durationMs: 1000,
    });
    expect(() => createLimiter({ store, ban: { ...TEST_BAN, maxRefusals: -1 } })).toThrow(RangeError);
  });

  it('escapes window names in structured-field headers and has no error body when allowed', async () => {
    const d = await limiter.consume('names', [{ name: 'per "10s"\\', limit: 5, windowMs: 10_000 }]);
    const h = rateLimitHeaders(d);
    expect(h['RateLimit-Policy']).toBe('"per \\"10s\\"\\\\";q=5;w=10');
    expect(h['RateLimit']).toBe('"per \\"10s\\"\\\\";r=4;t=10');
    expect(rateLimitErrorBody(d)).toBeNull();
  });

  it('decides synchronously when the store can (memory), with the same decisions as consume', async () => {
    const windows = [{ name: 'minute', limit: 2, windowMs: MINUTE_MS }];
    const viaPromise = createLimiter({
      store: createMemoryStore({ now: () => T }),
      ban: { ...TEST_BAN, maxRefusals: 1 },
    });
    const viaSync = createLimiter({ store: createMemoryStore({ now: () => T }), ban: { ...TEST_BAN, maxRefusals: 1 } });
    expect(viaSync.consumeSync).toBeTypeOf('function');
    for (let i = 0; i < 5; i++) {
      expect(viaSync.consumeSync!('k', windows)).toEqual(await viaPromise.consume('k', windows));
    }
    expect(viaSync.consumeSync!('k', windows)).toMatchObject({ allowed: false, reason: 'banned' });
    expect(() => viaSync.consumeSync!('k', [])).toThrow(RangeError);
    // A store that answers over the network (here the resilient wrapper) has no synchronous path.
    const resilient = createResilientStore({ primary: createMemoryStore(), mode: 'refuse' });
    expect(createLimiter({ store: resilient, ban: TEST_BAN }).consumeSync).toBeUndefined();
  });
});
