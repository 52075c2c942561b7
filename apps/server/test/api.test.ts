import { readFileSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { Pet, Pets } from '@animal-store/contract';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  auth,
  createTestDatabase,
  expectError,
  jsonPost,
  POOLED_PROVIDERS,
  PROVIDERS,
  startTestServer,
  useTestServer,
  withTestServer,
  type TestDatabase,
  type TestServer,
} from './helpers.js';

describe.each(POOLED_PROVIDERS)('HTTP API on %s', (provider) => {
  const ctx = useTestServer(provider, { keyCacheTtlMs: 0 });
  let server: TestServer;
  let key: string;
  let url: (path: string) => string;

  beforeAll(async () => {
    server = ctx.server;
    // Limits are tested in rate-limit.test.ts; this key has room for every request here.
    // Enough requests in flight at once for the parallel tests (the concurrency limit has tests of its own).
    key = await server.key('enterprise', { perMinute: 100_000, perDay: 1_000_000, concurrentRequests: 1000 });
    url = (path) => `${server.url}${path}`;
  });

  const create = async (body: unknown) => fetch(url('/v1/pets'), jsonPost(key, body));
  /** POST /v1/pets with these headers (the key's, unless `keyless`) and this raw body. */
  const post = (headers: Record<string, string>, body?: string, keyless = false) =>
    fetch(url('/v1/pets'), {
      method: 'POST',
      headers: keyless ? headers : auth(key, headers),
      ...(body !== undefined && { body }),
    });

  describe('authentication', () => {
    it('refuses a missing key with 401, an Error body and WWW-Authenticate', async () => {
      const res = await fetch(url('/v1/pets'));
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="animal-store"');
      await expectError(res, 401, 'unauthorized');
    });

    it.each([
      ['an unknown key', 'Bearer ask_' + 'A'.repeat(43)],
      ['a malformed key', 'Bearer not-a-key'],
      ['another scheme', 'Basic dXNlcjpwYXNz'],
      ['an empty bearer', 'Bearer '],
    ])('refuses %s', async (_what, header) => {
      const res = await fetch(url('/v1/pets'), { headers: { Authorization: header } });
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="animal-store"');
      await expectError(res, 401, 'unauthorized');
    });

    it('takes the scheme case-insensitively', async () => {
      for (const scheme of ['bearer', 'BEARER', 'Bearer', 'bEaReR']) {
        const res = await fetch(url('/v1/pets'), { headers: { Authorization: `${scheme} ${key}` } });
        expect(res.status).toBe(200);
      }
    });

    it('decides 401 before any input validation', async () => {
      await expectError(await fetch(url('/v1/pets?limit=abc&status=lost')), 401, 'unauthorized');
      await expectError(await fetch(url('/v1/pets/abc')), 401, 'unauthorized');
      await expectError(await post({ 'Content-Type': 'application/json' }, '{"name":', true), 401, 'unauthorized');
      await expectError(await post({ 'Content-Type': 'text/plain' }, 'x'.repeat(100_000), true), 401, 'unauthorized');
      await expectError(await fetch(url('/v1/pets'), { method: 'DELETE' }), 401, 'unauthorized');
    });

    it('refuses a revoked key', async () => {
      const other = await server.key('free');
      expect((await fetch(url('/v1/pets'), { headers: auth(other) })).status).toBe(200);
      const { hashKey } = await import('../src/keys/resolver.js');
      await server.db.apiKeys.revoke({ hash: hashKey(other) }, new Date());
      await expectError(await fetch(url('/v1/pets'), { headers: auth(other) }), 401, 'unauthorized');
    });
  });

  describe('createPet', () => {
    it('creates a pet: 201, Location, the assigned id, status absent when not given', async () => {
      const res = await create({ name: 'Rex', categoryId: 7 });
      expect(res.status).toBe(201);
      const pet = Pet.parse(await res.json());
      expect(pet).toEqual({ id: pet.id, name: 'Rex', categoryId: 7 });
      expect('status' in pet).toBe(false);
      expect(res.headers.get('location')).toBe(`/v1/pets/${pet.id}`);
      const again = await fetch(url(res.headers.get('location')!), { headers: auth(key) });
      expect(await again.json()).toEqual(pet);
    });

    it('ignores unknown fields and a client-sent id', async () => {
      const res = await create({ id: 424242, name: 'Tom', categoryId: 1, status: 'pending', colour: 'grey' });
      expect(res.status).toBe(201);
      const pet = Pet.parse(await res.json());
      expect(pet.id).not.toBe(424242);
      expect(pet).toEqual({ id: pet.id, name: 'Tom', categoryId: 1, status: 'pending' });
    });

    it.each([3000000000, 9007199254740991])('round-trips the int64 categoryId %d exactly', async (categoryId) => {
      const res = await create({ name: 'Big', categoryId });
      const text = await res.text();
      expect(text).toContain(`"categoryId":${categoryId}`);
      const { id } = JSON.parse(text) as { id: number };
      const read = await fetch(url(`/v1/pets/${id}`), { headers: auth(key) });
      expect(await read.text()).toContain(`"categoryId":${categoryId}`);
    });

    it.each([
      ['missing name', { categoryId: 1 }, 'name'],
      ['empty name', { name: '', categoryId: 1 }, 'name'],
      ['blank name', { name: '   ', categoryId: 1 }, 'name'],
      ['256-character name', { name: 'n'.repeat(256), categoryId: 1 }, 'name'],
      ['numeric name', { name: 5, categoryId: 1 }, 'name'],
      ['missing categoryId', { name: 'Rex' }, 'categoryId'],
      ['string categoryId', { name: 'Rex', categoryId: '3' }, 'categoryId'],
      ['fractional categoryId', { name: 'Rex', categoryId: 1.5 }, 'categoryId'],
      ['zero categoryId', { name: 'Rex', categoryId: 0 }, 'categoryId'],
      ['negative categoryId', { name: 'Rex', categoryId: -1 }, 'categoryId'],
      ['categoryId beyond 2^53-1', '{"name":"Rex","categoryId":9007199254740993}', 'categoryId'],
      ['huge categoryId', '{"name":"Rex","categoryId":1e400}', 'categoryId'],
      ['null status', { name: 'Rex', categoryId: 1, status: null }, 'status'],
      ['unknown status', { name: 'Rex', categoryId: 1, status: 'lost' }, 'status'],
      ['an array body', [{ name: 'Rex', categoryId: 1 }], 'body'],
    ])('refuses %s with 400 naming the field', async (_what, body, field) => {
      await expectError(await create(body), 400, 'invalid_request', field);
    });

    it('refuses malformed and empty JSON with 400', async () => {
      await expectError(await create('{"name": "Rex",'), 400, 'invalid_request', 'JSON');
      await expectError(await create('"just a string"'), 400, 'invalid_request', 'JSON');
      await expectError(await post({ 'Content-Type': 'application/json' }), 400, 'invalid_request', 'required');
      await expectError(await post({ 'Content-Type': 'application/json' }, ''), 400, 'invalid_request');
    });

    it('refuses a body that is not JSON with 415 and one over 64 KiB with 413', async () => {
      await expectError(
        await post({ 'Content-Type': 'text/plain' }, '{"name":"Rex","categoryId":1}'),
        415,
        'unsupported_media_type',
      );
      await expectError(
        await post({ 'Content-Type': 'application/x-www-form-urlencoded' }, 'name=Rex'),
        415,
        'unsupported_media_type',
      );
      const big = JSON.stringify({ name: 'Rex', categoryId: 1, padding: 'x'.repeat(70 * 1024) });
      await expectError(await create(big), 413, 'payload_too_large');
    });

    it('nothing half-written: refused bodies create no pet', async () => {
      const before = await fetch(url('/v1/pets?limit=100&status=available'), { headers: auth(key) }).then((r) =>
        r.json(),
      );
      await create({ name: 'Ghost', categoryId: 1, status: 'avail' });
      await create('{"name":"Ghost","categoryId":1,"status":"available"');
      const after = await fetch(url('/v1/pets?limit=100&status=available'), { headers: auth(key) }).then((r) =>
        r.json(),
      );
      expect(after).toEqual(before);
    });

    it('gives 100 parallel creates 100 distinct ids', async () => {
      const results = await Promise.all(
        Array.from({ length: 100 }, (_, i) => create({ name: `P${i}`, categoryId: i + 1 })),
      );
      expect(results.map((r) => r.status)).toEqual(Array(100).fill(201));
      const pets = await Promise.all(results.map(async (r) => Pet.parse(await r.json())));
      expect(new Set(pets.map((p) => p.id)).size).toBe(100);
    });
  });

  describe('listPets', () => {
    it('lists by id ascending with the default limit of 20', async () => {
      const res = await fetch(url('/v1/pets'), { headers: auth(key) });
      expect(res.status).toBe(200);
      const pets = Pets.parse(await res.json());
      expect(pets).toHaveLength(20);
      expect(pets.map((p) => p.id)).toEqual([...pets.map((p) => p.id)].sort((a, b) => a - b));
      expect(res.headers.get('link')).toMatch(/rel="next"/);
    });

    it.each(['0', '101', '-1', 'abc', '1.5', '1e2', '', '%201', '0x10'])(
      'refuses limit=%s with 400 naming limit',
      async (limit) => {
        await expectError(
          await fetch(url(`/v1/pets?limit=${limit}`), { headers: auth(key) }),
          400,
          'invalid_request',
          'limit',
        );
      },
    );

    it('refuses a repeated limit, an unknown or repeated status and a forged cursor', async () => {
      // Each message names the parameter refused: the first of its query.
      for (const query of [
        'limit=1&limit=2',
        'status=lost',
        'status=sold&status=pending',
        'cursor=bm9wZQ',
        'cursor=!!',
      ]) {
        const named = query.slice(0, query.indexOf('='));
        await expectError(await fetch(url(`/v1/pets?${query}`), { headers: auth(key) }), 400, 'invalid_request', named);
      }
    });

    it('accepts limits 1 and 100', async () => {
      expect(Pets.parse(await (await fetch(url('/v1/pets?limit=1'), { headers: auth(key) })).json())).toHaveLength(1);
      expect(Pets.parse(await (await fetch(url('/v1/pets?limit=100'), { headers: auth(key) })).json())).toHaveLength(
        100,
      );
    });

    it('pages through every pet of a status by following Link rel="next", keeping limit and status', async () => {
      const created: number[] = [];
      for (let i = 0; i < 7; i++)
        created.push(Pet.parse(await (await create({ name: `Sold ${i}`, categoryId: 9, status: 'sold' })).json()).id);
      const seen: number[] = [];
      let next: string | null = '/v1/pets?status=sold&limit=3';
      let pages = 0;
      while (next) {
        const res: Response = await fetch(new URL(next, server.url), { headers: auth(key) });
        expect(res.status).toBe(200);
        const page = Pets.parse(await res.json());
        expect(page.length).toBeLessThanOrEqual(3);
        for (const pet of page) expect(pet.status).toBe('sold');
        seen.push(...page.map((p) => p.id));
        const link = res.headers.get('link');
        next = link ? (/<([^>]+)>;\s*rel="next"/.exec(link)?.[1] ?? null) : null;
        if (next) expect(new URL(next, server.url).searchParams.get('limit')).toBe('3');
        if (next) expect(new URL(next, server.url).searchParams.get('status')).toBe('sold');
        pages++;
      }
      expect(seen).toEqual(created);
      expect(pages).toBe(3);
    });
  });

  describe('getPet (deprecated)', () => {
    it('answers 200, 404 and 400 with the deprecation headers on each, 401 included', async () => {
      const pet = Pet.parse(await (await create({ name: 'Old', categoryId: 2 })).json());
      const responses = [
        await fetch(url(`/v1/pets/${pet.id}`), { headers: auth(key) }),
        await fetch(url('/v1/pets/999999999'), { headers: auth(key) }),
        await fetch(url('/v1/pets/abc'), { headers: auth(key) }),
        await fetch(url(`/v1/pets/${pet.id}`)),
      ];
      expect(responses.map((r) => r.status)).toEqual([200, 404, 400, 401]);
      for (const res of responses) {
        expect(res.headers.get('deprecation')).toMatch(/^@\d+$/);
        expect(res.headers.get('sunset')).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
        expect(res.headers.get('link')).toBe('</v1/pets>; rel="successor-version"');
      }
      expect(Pet.parse(await responses[0]!.json())).toEqual(pet);
      await expectError(responses[1]!, 404, 'not_found');
    });

    it.each(['abc', '0', '-1', '1.5', '1e3', '9007199254740992', '99999999999999999999999'])(
      'refuses petId %s with 400, never 5xx',
      async (id) => {
        await expectError(await fetch(url(`/v1/pets/${id}`), { headers: auth(key) }), 400, 'invalid_request', 'petId');
      },
    );
  });

  describe('errors and headers', () => {
    it('answers unknown routes with 404 and wrong methods with 405 + Allow', async () => {
      await expectError(await fetch(url('/v1/nothing'), { headers: auth(key) }), 404, 'not_found');
      await expectError(await fetch(url('/nothing')), 404, 'not_found');
      const put = await fetch(url('/v1/pets'), { method: 'PUT', headers: auth(key) });
      expect(put.headers.get('allow')).toBe('GET, HEAD, POST');
      await expectError(put, 405, 'method_not_allowed');
      const del = await fetch(url('/v1/pets/1'), { method: 'DELETE', headers: auth(key) });
      expect(del.headers.get('allow')).toBe('GET, HEAD');
      await expectError(del, 405, 'method_not_allowed');
    });

    it('answers malformed URLs and undecodable bodies with 400, never 5xx', async () => {
      await expectError(await fetch(url('/v1/pets/%E0%A4%A'), { headers: auth(key) }), 400, 'invalid_request', 'URL');
      await expectError(
        await fetch(url('/v1/pets?status=%E0%A4%A'), { headers: auth(key) }),
        400,
        'invalid_request',
        'status',
      );
      const gzip = await post({ 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, 'not gzip');
      await expectError(gzip, 400, 'invalid_request', 'Content-Encoding');
      const br = await post({ 'Content-Type': 'application/json', 'Content-Encoding': 'compress' }, 'x');
      await expectError(br, 415, 'unsupported_media_type');
    });

    it('sends nosniff and a request id, never X-Powered-By', async () => {
      const res = await fetch(url('/v1/pets'), { headers: auth(key, { 'X-Request-Id': 'trace-123' }) });
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-powered-by')).toBeNull();
      expect(res.headers.get('x-request-id')).toBe('trace-123');
      const generated = await fetch(url('/v1/pets'), { headers: auth(key, { 'X-Request-Id': 'bad id with spaces' }) });
      expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('serves the OpenAPI document without a key, and health outside /v1', async () => {
      const doc = await fetch(url('/v1/openapi.json'));
      expect(doc.status).toBe(200);
      const json = (await doc.json()) as {
        openapi: string;
        paths: Record<string, Record<string, { deprecated?: boolean }>>;
      };
      expect(json.openapi).toMatch(/^3\./);
      expect(json.paths['/v1/pets/{petId}']?.get?.deprecated).toBe(true);
      expect((await fetch(url('/healthz'))).status).toBe(200);
      const ready = await fetch(url('/readyz'));
      expect(ready.status).toBe(200);
    });
  });
});

describe.each(PROVIDERS)('persistence and failure on %s', (provider) => {
  it('keeps data across an app restart', async () => {
    const database = await createTestDatabase(provider);
    try {
      const first = await startTestServer(database.target);
      const key = await first.key();
      const created = Pet.parse(
        await (
          await fetch(
            `${first.url}/v1/pets`,
            jsonPost(key, { name: 'Stays', categoryId: 9007199254740991, status: 'sold' }),
          )
        ).json(),
      );
      await first.close();
      const second = await startTestServer(database.target);
      try {
        const res = await fetch(`${second.url}/v1/pets/${created.id}`, { headers: auth(key) });
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual(created);
      } finally {
        await second.close();
      }
    } finally {
      await database.drop();
    }
  });

  it('answers 500 internal_error without internals when a query fails', async () => {
    await withTestServer(provider, {}, async (server, database) => {
      const key = await server.key();
      expect((await fetch(`${server.url}/v1/pets`, { headers: auth(key) })).status).toBe(200);
      await dropPetTable(database);
      const res = await fetch(`${server.url}/v1/pets?limit=5`, { headers: auth(key) });
      const body = await expectError(res, 500, 'internal_error');
      expect(body.message).toBe('Internal server error');
      expect(JSON.stringify(body)).not.toMatch(/Pet"|table|relation/i);
    });
  });
});

describe('readiness', () => {
  it('answers /readyz 503 when PostgreSQL cannot be reached', async () => {
    await withTestServer('postgresql', {}, async (server) => {
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      await server.db.close();
      const res = await fetch(`${server.url}/readyz`);
      await expectError(res, 503, 'service_unavailable');
    });
  });
});

async function dropPetTable(database: TestDatabase): Promise<void> {
  if (database.target.provider === 'sqlite') {
    const sqlite = new BetterSqlite3(database.target.file);
    sqlite.exec('DROP TABLE "Pet"');
    sqlite.close();
  } else {
    const client = new pg.Client({ connectionString: database.target.url });
    await client.connect();
    await client.query('DROP TABLE "Pet"');
    await client.end();
  }
}

describe('SQLite file', () => {
  it('holds no raw key, only its hash', async () => {
    await withTestServer('sqlite', {}, async (server, database) => {
      const key = await server.key('business');
      await server.close();
      const file = (database.target as { file: string }).file;
      const bytes = readFileSync(file).toString('latin1') + readWalIfAny(file);
      expect(bytes).not.toContain(key);
      expect(bytes).not.toContain(key.slice(12));
    });
  });
});

function readWalIfAny(file: string): string {
  try {
    return readFileSync(`${file}-wal`).toString('latin1');
  } catch {
    return '';
  }
}
