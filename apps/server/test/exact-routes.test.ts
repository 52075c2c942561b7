import { RateLimitStatus } from '@animal-store/contract';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  auth,
  awayFromMinuteEnd,
  expectError,
  jsonPost,
  PROVIDERS,
  useTestServer,
  type TestServer,
} from './helpers.js';

/** #24 items 7 and 9: a route answers at its own spelling only, and what it answers names the canonical route. */
describe.each(PROVIDERS)('routes matched exactly, on %s', (provider) => {
  const ctx = useTestServer(provider);
  let server: TestServer;
  beforeAll(() => {
    server = ctx.server;
  });
  const remaining = (res: Response) => Number(res.headers.get('x-ratelimit-remaining'));

  it('GET /v1/rate_limit is uncharged at its own spelling only, and carries RateLimit and RateLimit-Policy', async () => {
    const key = await server.key('pro');
    // The three charges and the reading after them are counted in one minute window.
    await awayFromMinuteEnd(5);
    const res = await fetch(`${server.url}/v1/rate_limit`, { headers: auth(key) });
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-policy')).toBe('"minute";q=300;w=60, "day";q=10000;w=86400');
    expect(res.headers.get('ratelimit')).toMatch(/^"minute";r=300;t=\d+, "day";r=10000;t=\d+$/);
    expect(RateLimitStatus.parse(await res.json()).minute.remaining).toBe(300);
    for (const spelling of ['/v1/rate_limit/', '/v1/Rate_Limit', '/v1/rate_limit//']) {
      const other = await fetch(`${server.url}${spelling}`, { headers: auth(key) });
      await expectError(other, 404, 'not_found');
      // Charged as any unknown path under /v1 is, and said so in its headers.
      expect(other.headers.get('ratelimit-policy'), spelling).toContain('"minute";q=300');
    }
    // Not under /v1 at all: an unknown path, neither limited nor charged.
    const outside = await fetch(`${server.url}/V1/rate_limit`, { headers: auth(key) });
    await expectError(outside, 404, 'not_found');
    expect(outside.headers.get('ratelimit-policy')).toBeNull();
    const after = RateLimitStatus.parse(
      await (await fetch(`${server.url}/v1/rate_limit`, { headers: auth(key) })).json(),
    );
    expect(after.minute.remaining).toBe(297);
  });

  it('answers other spellings of the pets routes 404, and Location names the canonical route', async () => {
    const key = await server.key('pro');
    for (const [method, path] of [
      ['GET', '/v1/PETS'],
      ['GET', '/v1/pets/'],
      ['POST', '/V1/PETS'],
      ['POST', '/v1/pets/'],
      ['GET', '/v1/Pets/1'],
      ['GET', '/v1/pets/1/'],
    ] as const) {
      const res =
        method === 'GET'
          ? await fetch(`${server.url}${path}`, { headers: auth(key) })
          : await fetch(`${server.url}${path}`, jsonPost(key, { name: 'Case', categoryId: 1 }));
      await expectError(res, 404, 'not_found');
      expect(res.headers.get('location'), path).toBeNull();
    }
    const created = await fetch(`${server.url}/v1/pets`, jsonPost(key, { name: 'Canonical', categoryId: 1 }));
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    expect(created.headers.get('location')).toBe(`/v1/pets/${id}`);
    expect(remaining(created)).toBeGreaterThan(0);
  });
});
