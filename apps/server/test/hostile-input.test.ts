import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryStore } from '@animal-store/rate-limit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { openDatabase } from '../src/db/database.js';
import type { Database } from '../src/db/types.js';
import { createServer } from '../src/http/server.js';
import { createApiKey } from '../src/keys/admin.js';
import {
  auth,
  createTestDatabase,
  databaseConfig,
  jsonPost,
  PROVIDERS,
  silentLogger,
  useTestServer,
  type TestDatabase,
} from './helpers.js';

/** A request with headers given as Node sends them: an array value is sent as several header lines. */
function request(
  url: string,
  path: string,
  headers: http.OutgoingHttpHeaders,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}${path}`, { headers }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe.each(PROVIDERS)('names that cannot be stored faithfully, on %s', (provider) => {
  const ctx = useTestServer(provider, {}, { plan: 'enterprise', limits: { perMinute: 100_000, perDay: 1_000_000 } });

  it.each([
    ['NUL', 'a\u0000b'],
    ['a lone high surrogate', '\ud800'],
    ['a lone low surrogate', 'x\udc00'],
    ['a line break', 'two\nlines'],
    ['a C1 control', 'next\u0085line'],
  ])('refuses %s with 400 invalid_request naming the field', async (_what, name) => {
    const res = await fetch(`${ctx.server.url}/v1/pets`, jsonPost(ctx.key, { name, categoryId: 1 }));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; message: string };
    expect(body.code).toBe('invalid_request');
    expect(body.message).toMatch(/name/);
  });

  it('stores 255 code points of any plane and gives back the same 255', async () => {
    const name = '\u{1F415}é\u00a0名'.repeat(63) + 'abc'; // 255 code points, 318 UTF-16 units
    expect([...name]).toHaveLength(255);
    const created = await fetch(`${ctx.server.url}/v1/pets`, jsonPost(ctx.key, { name, categoryId: 1 }));
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    const read = (await (await fetch(`${ctx.server.url}/v1/pets/${id}`, { headers: auth(ctx.key) })).json()) as {
      name: string;
    };
    expect(read.name).toBe(name);
    expect([...read.name]).toHaveLength(255);
  });
});

describe('two Authorization headers', () => {
  const ctx = useTestServer('sqlite');
  it('are refused with 400 invalid_request (not "the first one wins"), with the rate-limit headers', async () => {
    const key = await ctx.server.key();
    const res = await request(ctx.server.url, '/v1/pets', { Authorization: [`Bearer ${key}`, `Bearer ${key}`] });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'invalid_request', status: 400 });
    expect(res.headers['x-ratelimit-limit']).toBe('60');
    // One header with the same key is fine.
    expect((await request(ctx.server.url, '/v1/pets', { Authorization: `Bearer ${key}` })).status).toBe(200);
  });
});

describe('refusing cheaply', () => {
  let database: TestDatabase;
  let db: Database;
  let server: http.Server;
  let url: string;
  let lookups = 0;
  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    db = await openDatabase(databaseConfig(database.target));
    // The real store, counting the lookups that reach the database.
    const findByHash = db.apiKeys.findByHash.bind(db.apiKeys);
    db.apiKeys.findByHash = (hash) => {
      lookups++;
      return findByHash(hash);
    };
    const app = createApp({
      db,
      logger: silentLogger,
      rateLimit: { store: createMemoryStore(), banThreshold: 10, banSeconds: 900 },
    });
    server = await new Promise((resolve) => {
      const s = createServer(app).listen(0, '127.0.0.1', () => resolve(s));
    });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await db.close();
    await database.drop();
  });

  it('answers an address over its keyless limit, or banned, with 429 before any key lookup', async () => {
    const randomKey = () => `Bearer ask_${randomBytes(32).toString('base64url')}`;
    let status = 0;
    for (let i = 0; i < 200 && status !== 429; i++) {
      const res = await fetch(`${url}/v1/pets`, { headers: { Authorization: randomKey() } });
      status = res.status;
      await res.arrayBuffer();
    }
    expect(status).toBe(429);
    const before = lookups;
    const codes: string[] = [];
    for (let i = 0; i < 15; i++) {
      const res = await fetch(`${url}/v1/pets`, { headers: { Authorization: randomKey() } });
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
      codes.push(((await res.json()) as { code: string }).code);
    }
    expect(lookups).toBe(before);
    // Refusals still count: the address ends banned.
    expect(codes.at(-1)).toBe('api_key_banned');
    // A valid key not looked up yet waits for the address's refusal to end too: the address is checked first.
    const { raw } = await createApiKey(db.apiKeys, { plan: 'free' });
    expect((await fetch(`${url}/v1/pets`, { headers: auth(raw) })).status).toBe(429);
  });
});
