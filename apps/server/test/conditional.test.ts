import { beforeAll, describe, expect, it } from 'vitest';
import { auth, jsonPost, PROVIDERS, useTestServer, type TestServer } from './helpers.js';

// With response validation (as the other tests run) and without it (as production runs: cached pages are then
// serialized once and their ETag kept, see fast-path/lean-json.ts).
const SETUPS = PROVIDERS.flatMap((provider) =>
  [true, false].map((validateResponses) => [provider, validateResponses] as const),
);

describe.each(SETUPS)('conditional requests on %s (response validation: %s)', (provider, validateResponses) => {
  const ctx = useTestServer(provider, { validateResponses });
  let server: TestServer;
  let key: string;
  beforeAll(async () => {
    server = ctx.server;
    key = await server.key('pro');
    await fetch(`${server.url}/v1/pets`, jsonPost(key, { name: 'Rex', categoryId: 1 }));
  });

  it.each(['/v1/pets?limit=5', '/v1/pets/1'])(
    '%s: strong ETag; a current If-None-Match gets 304 with no body and the headers kept',
    async (path) => {
      const first = await fetch(`${server.url}${path}`, { headers: auth(key) });
      expect(first.status).toBe(200);
      const etag = first.headers.get('etag');
      expect(etag).toMatch(/^"[^"]+"$/); // strong: no W/ prefix
      expect(first.headers.get('cache-control')).toBe('private, no-cache');

      const again = await fetch(`${server.url}${path}`, { headers: auth(key, { 'If-None-Match': etag! }) });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe('');
      expect(again.headers.get('content-type')).toBeNull();
      expect(again.headers.get('content-length')).toBeNull();
      expect(again.headers.get('etag')).toBe(etag);
      expect(again.headers.get('x-ratelimit-limit')).toBe('300');
      // 304s are charged like any request: the limiter decided before the answer was known. Charged in the first
      // answer's minute, or, when the minute turned between the two (its reset moved), as the new minute's first.
      const sameWindow = again.headers.get('x-ratelimit-reset') === first.headers.get('x-ratelimit-reset');
      expect(Number(again.headers.get('x-ratelimit-remaining'))).toBe(
        sameWindow ? Number(first.headers.get('x-ratelimit-remaining')) - 1 : 300 - 1,
      );
      if (path.startsWith('/v1/pets/')) expect(again.headers.get('sunset')).toBe('Thu, 05 Dec 2030 00:00:00 GMT');

      const stale = await fetch(`${server.url}${path}`, {
        headers: auth(key, { 'If-None-Match': '"something-else"' }),
      });
      expect(stale.status).toBe(200);
    },
  );

  it('HEAD answers the headers of GET without the body, and 304 too', async () => {
    const get = await fetch(`${server.url}/v1/pets?limit=5`, { headers: auth(key) });
    const body = await get.text();
    const head = await fetch(`${server.url}/v1/pets?limit=5`, { method: 'HEAD', headers: auth(key) });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect(head.headers.get('etag')).toBe(get.headers.get('etag'));
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(body)));
    expect(head.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const notModified = await fetch(`${server.url}/v1/pets?limit=5`, {
      method: 'HEAD',
      headers: auth(key, { 'If-None-Match': get.headers.get('etag')! }),
    });
    expect(notModified.status).toBe(304);
  });

  it('a change gives the list a new tag and body; unchanged, the same page answers the same bytes and tag', async () => {
    const first = await fetch(`${server.url}/v1/pets?limit=5`, { headers: auth(key) });
    const firstBody = await first.text();
    const before = first.headers.get('etag');
    const same = await fetch(`${server.url}/v1/pets?limit=5`, { headers: auth(key) });
    expect(await same.text()).toBe(firstBody);
    expect(same.headers.get('etag')).toBe(before);
    expect(same.headers.get('content-length')).toBe(String(Buffer.byteLength(firstBody)));

    const created = (await (
      await fetch(`${server.url}/v1/pets`, jsonPost(key, { name: 'Tom', categoryId: 2 }))
    ).json()) as { id: number };
    const after = await fetch(`${server.url}/v1/pets?limit=5`, { headers: auth(key, { 'If-None-Match': before! }) });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(before);
    expect(((await after.json()) as Array<{ id: number }>).map((p) => p.id)).toContain(created.id);
  });

  it('errors carry no ETag and never turn into 304', async () => {
    const res = await fetch(`${server.url}/v1/pets/999`, { headers: auth(key, { 'If-None-Match': '*' }) });
    expect(res.status).toBe(404);
    expect(res.headers.get('etag')).toBeNull();
  });
});
