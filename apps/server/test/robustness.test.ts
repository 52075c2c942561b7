import { describe, expect, it } from 'vitest';
import { auth, PROVIDERS, useTestServer } from './helpers.js';

/** Small deterministic PRNG (mulberry32), so a failure names a seed that reproduces it. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pieces = {
  paths: [
    '/v1/pets',
    '/v1/pets/',
    '/v1/pets/1',
    '/v1/pets/0',
    '/v1/pets/-1',
    '/v1/pets/%00',
    '/v1/pets/%E0%A4%A',
    '/v1/pets/1e3',
    '/v1/pets/abc/def',
    '/v1/%2e%2e/pets',
    '/v1/pets/99999999999999999999',
    '/v1',
    '/v1/',
    '/v1/openapi.json',
  ],
  queries: [
    '',
    '?limit=',
    '?limit=0',
    '?limit=%ff',
    '?limit[]=1',
    '?limit=1&limit=2',
    '?status=',
    '?status=sold&status=x',
    '?cursor=',
    '?cursor=%00',
    '?cursor=' + 'A'.repeat(300),
    '?cursor=cDEuMQ',
    '?a=%',
    '?limit=20&status=sold',
  ],
  methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'],
  types: [
    undefined,
    'application/json',
    'application/json; charset=utf-16',
    'text/plain',
    'application/merge-patch+json',
    'multipart/form-data; boundary=x',
    'application/json; charset=iso-8859-1',
  ],
  bodies: [
    undefined,
    '',
    '{',
    '[]',
    'null',
    '1',
    '"x"',
    '{"name":"Rex","categoryId":1}',
    '{"name":"Rex","categoryId":1e309}',
    '{"name":{"a":1},"categoryId":[1]}',
    '{"name":"Rex","categoryId":1,"status":{"$ne":null}}',
    '\u0000\u0001',
    '{"name":"' + 'x'.repeat(70_000) + '","categoryId":1}',
  ],
};

describe.each(PROVIDERS)('no 5xx for anything a client can send, on %s', (provider) => {
  const ctx = useTestServer(provider, {}, { plan: 'enterprise', limits: { perMinute: 1_000_000, perDay: 10_000_000 } });

  it('answers 300 random malformed requests with a 2xx/3xx/4xx, and an Error body on every 4xx', async () => {
    const seed = 20261122;
    const random = prng(seed);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
    for (let i = 0; i < 300; i++) {
      const method = pick(pieces.methods);
      const path = pick(pieces.paths) + pick(pieces.queries);
      const type = pick(pieces.types);
      const body = method === 'GET' || method === 'HEAD' ? undefined : pick(pieces.bodies);
      const headers: Record<string, string> = random() < 0.8 ? auth(ctx.key) : {};
      if (type) headers['Content-Type'] = type;
      const res = await fetch(`${ctx.server.url}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
      const text = await res.text();
      const where = `seed ${seed} request ${i}: ${method} ${path} ${type ?? '-'} -> ${res.status} ${text.slice(0, 200)}`;
      expect(res.status, where).toBeLessThan(500);
      if (res.status >= 400 && method !== 'HEAD') {
        expect(res.headers.get('content-type'), where).toMatch(/^application\/json/);
        const parsed = JSON.parse(text) as { code: string; status: number; message: string };
        expect(parsed.status, where).toBe(res.status);
        expect(parsed.message, where).not.toMatch(/\bat \S+:\d+|node_modules|prisma|express/i);
      }
    }
  });
});
