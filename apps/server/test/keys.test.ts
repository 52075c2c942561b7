import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { ApiKey, ApiKeyUsage, CreatedApiKey, RateLimitStatus } from '@animal-store/contract';
import { createMemoryStore } from '@animal-store/rate-limit';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../src/keys/resolver.js';
import { createLogger } from '../src/logger.js';
import { auth, expectError, jsonPost, PROVIDERS, useTestServer, type TestServer } from './helpers.js';
import { exchange, statusesOf } from './raw-http.js';

const ADMIN_TOKEN = 'admin-token-for-tests-0123456789abcdef';
const T0 = Date.UTC(2030, 0, 1, 12, 0, 30);

/** Log lines the app wrote, as objects (to check what admin actions log, and that no secret is among them). */
function capturedLogger() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return {
    logger: createLogger('info', sink),
    lines,
    records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

describe.each(PROVIDERS)('API keys as a product on %s', (provider) => {
  let clock = T0;
  const log = capturedLogger();
  const ctx = useTestServer(provider, {
    keyCacheTtlMs: 60_000,
    adminToken: ADMIN_TOKEN,
    now: () => clock,
    logger: log.logger,
    rateLimit: { store: createMemoryStore({ now: () => clock }), banThreshold: 1, banSeconds: 600 },
  });
  let server: TestServer;
  const admin = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}/admin/v1${path}`, {
      ...init,
      headers: { ...auth(ADMIN_TOKEN), ...(init.body ? { 'Content-Type': 'application/json' } : {}), ...init.headers },
    });
  const adminJson = (method: string, path: string, body?: unknown) =>
    admin(path, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const createKey = async (body: Record<string, unknown>) => {
    const res = await adminJson('POST', '/keys', body);
    expect(res.status).toBe(201);
    return CreatedApiKey.parse(await res.json());
  };
  const pets = (key: string) => fetch(`${server.url}/v1/pets`, { headers: auth(key) });

  beforeAll(() => {
    server = ctx.server;
  });

  describe('format', () => {
    it('issues ask_ keys with a checksum; a mistyped one is a 401 limited per address, the original still works', async () => {
      const { secret, key } = await createKey({ plan: 'pro', name: 'format' });
      expect(secret).toMatch(/^ask_[0-9A-Za-z]{49}$/);
      expect(key.prefix).toBe(secret.slice(0, 12));
      expect((await pets(secret)).status).toBe(200);
      const typo = secret.slice(0, 20) + (secret[20] === 'x' ? 'y' : 'x') + secret.slice(21);
      const refused = await pets(typo);
      await expectError(refused, 401, 'unauthorized');
      // The Free limits of the client address, not the key's Pro ones.
      expect(refused.headers.get('x-ratelimit-limit')).toBe('60');
    });

    it('judges each request of one connection by its own key (a connection remembers only the hash of its last)', async () => {
      const { secret: free } = await createKey({ plan: 'free' });
      const { secret: pro } = await createKey({ plan: 'pro' });
      const typo = free.slice(0, 20) + (free[20] === 'x' ? 'y' : 'x') + free.slice(21);
      const get = (key: string | undefined, last = false) =>
        `GET /v1/pets?limit=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n${key ? `Authorization: Bearer ${key}\r\n` : ''}` +
        `${last ? 'Connection: close\r\n' : ''}\r\n`;
      const port = Number(new URL(server.url).port);
      const raw = await exchange(port, get(free), get(pro), get(typo), get(undefined), get(pro), get(free, true));
      expect(statusesOf(raw)).toEqual([200, 200, 401, 401, 200, 200]);
      const header = (name: string) => [...raw.matchAll(new RegExp(`\r\n${name}: (\\d+)`, 'gi'))].map((m) => m[1]);
      const [freeLimit, proLimit, , , proAgain, freeAgain] = header('x-ratelimit-limit');
      expect(proLimit).not.toBe(freeLimit);
      expect([proAgain, freeAgain]).toEqual([proLimit, freeLimit]);
      // The last request drew on the first one's budget, not on another key's.
      const remaining = header('x-ratelimit-remaining').map(Number);
      expect(remaining[5]).toBe(remaining[0]! - 1);
      expect(remaining[4]).toBe(remaining[1]! - 1);
    });

    it('keeps accepting keys issued in the old format (no checksum)', async () => {
      // How keys were made before the checksum: 32 random bytes in base64url.
      const legacy = `ask_${randomBytes(32).toString('base64url')}`;
      expect(legacy).toMatch(/^ask_[A-Za-z0-9_-]{43}$/);
      await server.db.apiKeys.create({
        prefix: legacy.slice(0, 12),
        hash: hashKey(legacy),
        name: 'legacy',
        plan: 'free',
        perMinute: null,
        perDay: null,
        concurrentRequests: null,
        scopes: ['pets:read', 'pets:write'],
        expiresAt: null,
        lineageId: null,
      });
      expect((await pets(legacy)).status).toBe(200);
    });
  });

  describe('scopes', () => {
    it('a read-only key lists but cannot create: 403 insufficient_scope with RFC 6750 WWW-Authenticate, before the body is read', async () => {
      const { secret, key } = await createKey({ plan: 'pro', scopes: ['pets:read'] });
      expect(key.scopes).toEqual(['pets:read']);
      expect((await pets(secret)).status).toBe(200);
      const res = await fetch(`${server.url}/v1/pets`, jsonPost(secret, '{not json'));
      expect(res.headers.get('www-authenticate')).toBe(
        'Bearer realm="animal-store", error="insufficient_scope", scope="pets:write"',
      );
      await expectError(res, 403, 'insufficient_scope', 'pets:write');
    });

    it('a write-only key creates but cannot read; scopes default to both', async () => {
      const { secret } = await createKey({ plan: 'pro', scopes: ['pets:write'] });
      expect((await fetch(`${server.url}/v1/pets`, jsonPost(secret, { name: 'Rex', categoryId: 1 }))).status).toBe(201);
      const res = await pets(secret);
      expect(res.headers.get('www-authenticate')).toContain('scope="pets:read"');
      await expectError(res, 403, 'insufficient_scope');
      expect((await createKey({ plan: 'free' })).key.scopes).toEqual(['pets:read', 'pets:write']);
    });

    it('a re-scoped key is refused at once, the cache notwithstanding', async () => {
      const { secret, key } = await createKey({ plan: 'pro' });
      expect((await pets(secret)).status).toBe(200);
      expect((await adminJson('PATCH', `/keys/${key.id}`, { scopes: ['pets:write'] })).status).toBe(200);
      expect((await pets(secret)).status).toBe(403);
    });
  });

  describe('expiry', () => {
    it('an expired key gets 401 saying it expired, and nothing else about it', async () => {
      const { secret } = await createKey({ plan: 'pro', expiresAt: new Date(clock + 3_600_000).toISOString() });
      expect((await pets(secret)).status).toBe(200);
      clock += 3_600_000;
      try {
        const res = await pets(secret);
        const body = await expectError(res, 401, 'unauthorized');
        expect(body.message).toBe('API key expired');
        expect(res.headers.get('x-ratelimit-limit')).toBe('60');
      } finally {
        clock -= 3_600_000;
      }
    });
  });

  describe('rotation', () => {
    it('issues a new key with the same settings; both work during the overlap, then only the new one', async () => {
      const { key: old, secret: oldSecret } = await createKey({
        plan: 'enterprise',
        name: 'rotating',
        perMinute: 50,
        perDay: 500,
        scopes: ['pets:read'],
      });
      const res = await adminJson('POST', `/keys/${old.id}/rotate`, { overlapSeconds: 60 });
      expect(res.status).toBe(201);
      const { key, secret } = CreatedApiKey.parse(await res.json());
      expect(secret).not.toBe(oldSecret);
      expect(key).toMatchObject({
        name: 'rotating',
        plan: 'enterprise',
        perMinute: 50,
        perDay: 500,
        scopes: ['pets:read'],
        expiresAt: null,
      });
      expect(key.id).not.toBe(old.id);
      const before = ApiKey.parse(await (await admin(`/keys/${old.id}`)).json());
      expect(before.expiresAt).toBe(new Date(clock + 60_000).toISOString());
      expect((await pets(oldSecret)).status).toBe(200);
      expect((await pets(secret)).status).toBe(200);
      clock += 60_000;
      try {
        expect((await expectError(await pets(oldSecret), 401, 'unauthorized')).message).toBe('API key expired');
        expect((await pets(secret)).status).toBe(200);
        await expectError(await adminJson('POST', `/keys/${old.id}/rotate`, {}), 409, 'conflict', 'expired');
      } finally {
        clock -= 60_000;
      }
    });

    it('old and new keys share counters and bans; lifting the ban frees both', async () => {
      const { key: old, secret: oldSecret } = await createKey({ plan: 'enterprise', perMinute: 2, perDay: 100 });
      expect((await pets(oldSecret)).status).toBe(200);
      const { key, secret } = CreatedApiKey.parse(await (await adminJson('POST', `/keys/${old.id}/rotate`, {})).json());
      expect((await pets(secret)).status).toBe(200); // the lineage's second request this minute
      const usage = ApiKeyUsage.parse(await (await admin(`/keys/${key.id}/usage`)).json());
      expect(usage.minute).toMatchObject({ limit: 2, used: 2, remaining: 0 });
      expect(usage.day).toMatchObject({ limit: 100, used: 2, remaining: 98 });
      expect(usage.bannedUntil).toBeNull();
      expect((await pets(oldSecret)).status).toBe(429);
      const banned = await pets(secret); // the second refusal crosses the threshold of 1
      await expectError(banned, 429, 'api_key_banned');
      await expectError(await pets(oldSecret), 429, 'api_key_banned');
      const usageBanned = ApiKeyUsage.parse(await (await admin(`/keys/${old.id}/usage`)).json());
      expect(usageBanned.bannedUntil).toBe(new Date(clock + 600_000).toISOString());

      const lift = await admin(`/keys/${key.id}/ban`, { method: 'DELETE' });
      expect(lift.status).toBe(204);
      expect((await pets(oldSecret)).status).toBe(200);
      expect((await pets(secret)).status).toBe(200);
    });
  });

  describe('revocation', () => {
    it('takes effect at once on this replica (the key cache TTL here is 60 s)', async () => {
      const { key, secret } = await createKey({ plan: 'pro' });
      expect((await pets(secret)).status).toBe(200);
      const res = await admin(`/keys/${key.id}/revoke`, { method: 'POST' });
      expect(res.status).toBe(200);
      expect(ApiKey.parse(await res.json()).revokedAt).not.toBeNull();
      await expectError(await pets(secret), 401, 'unauthorized', 'Invalid or revoked');
      await expectError(await adminJson('PATCH', `/keys/${key.id}`, { name: 'x' }), 409, 'conflict', 'revoked');
      await expectError(await adminJson('POST', `/keys/${key.id}/rotate`, {}), 409, 'conflict', 'revoked');
    });
  });

  describe('last use', () => {
    it('is recorded to the minute, in one write per key and minute, without a write per request', async () => {
      const { key, secret } = await createKey({ plan: 'pro' });
      expect(ApiKey.parse(await (await admin(`/keys/${key.id}`)).json()).lastUsedAt).toBeNull();
      for (let i = 0; i < 3; i++) expect((await pets(secret)).status).toBe(200);
      await server.flushLastUsed();
      const minute = Math.floor(clock / 60_000) * 60_000;
      expect(ApiKey.parse(await (await admin(`/keys/${key.id}`)).json()).lastUsedAt).toBe(
        new Date(minute).toISOString(),
      );
    });
  });

  describe('GET /v1/rate_limit', () => {
    it("answers the caller's plan and windows, and is not charged", async () => {
      const { secret } = await createKey({ plan: 'pro' });
      expect((await pets(secret)).status).toBe(200);
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${server.url}/v1/rate_limit`, { headers: auth(secret) });
        expect(res.status).toBe(200);
        const status = RateLimitStatus.parse(await res.json());
        expect(status).toMatchObject({
          plan: 'pro',
          minute: { limit: 300, remaining: 299 },
          day: { limit: 10_000, remaining: 9_999 },
        });
        expect(status.minute.reset).toBe(Math.ceil((Math.floor(clock / 60_000) + 1) * 60));
      }
    });

    it('without a valid key is a 401, limited per address', async () => {
      const res = await fetch(`${server.url}/v1/rate_limit`);
      await expectError(res, 401, 'unauthorized');
      expect(res.headers.get('x-ratelimit-limit')).toBe('60');
    });
  });

  describe('admin API', () => {
    it('creates, lists (paged), shows and changes keys; never shows a secret or a hash', async () => {
      const created = await createKey({
        plan: 'business',
        name: 'dash',
        scopes: ['pets:read'],
        expiresAt: '2031-01-01T00:00:00Z',
      });
      expect(created.key).toMatchObject({
        plan: 'business',
        name: 'dash',
        perMinute: 1000,
        perDay: 100_000,
        concurrentRequests: 50,
        expiresAt: '2031-01-01T00:00:00.000Z',
        revokedAt: null,
      });
      const shown = await (await admin(`/keys/${created.key.id}`)).text();
      expect(shown).not.toContain(created.secret.slice(12));
      expect(shown).not.toContain(hashKey(created.secret));

      const patched = await adminJson('PATCH', `/keys/${created.key.id}`, {
        name: null,
        expiresAt: null,
        scopes: ['pets:read', 'pets:write'],
      });
      expect(ApiKey.parse(await patched.json())).toMatchObject({
        name: null,
        expiresAt: null,
        scopes: ['pets:read', 'pets:write'],
      });

      const first = await admin('/keys?limit=2');
      expect(first.status).toBe(200);
      expect(ApiKey.array().parse(await first.json())).toHaveLength(2);
      const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1];
      expect(next).toMatch(/^\/admin\/v1\/keys\?limit=2&cursor=/);
      const all: number[] = [];
      let link: string | undefined = '/admin/v1/keys?limit=3';
      while (link) {
        const page: Response = await fetch(`${server.url}${link}`, { headers: auth(ADMIN_TOKEN) });
        all.push(
          ...ApiKey.array()
            .parse(await page.json())
            .map((k) => k.id),
        );
        link = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
      }
      expect(all).toEqual([...all].sort((a, b) => a - b));
      expect(all).toContain(created.key.id);
      expect(new Set(all).size).toBe(all.length);
    });

    it('sets, changes and clears an enterprise key’s own concurrent requests; shows the number in force', async () => {
      const limits = { perMinute: 100, perDay: 1000 };
      const created = await createKey({ plan: 'enterprise', ...limits, concurrentRequests: 300 });
      expect(created.key).toMatchObject({ ...limits, concurrentRequests: 300 });
      const path = `/keys/${created.key.id}`;
      const changed = ApiKey.parse(await (await adminJson('PATCH', path, { concurrentRequests: 7 })).json());
      expect(changed.concurrentRequests).toBe(7);
      const cleared = ApiKey.parse(await (await adminJson('PATCH', path, { concurrentRequests: null })).json());
      expect(cleared.concurrentRequests).toBe(50); // the business plan's, as for a missing window
      const rotated = await adminJson('POST', `${path}/rotate`, {});
      expect(((await rotated.json()) as { key: ApiKey }).key.concurrentRequests).toBe(50);
      expect((await createKey({ plan: 'enterprise', ...limits })).key.concurrentRequests).toBe(50);
      const pro = await createKey({ plan: 'pro' });
      expect(pro.key.concurrentRequests).toBe(20);
      await expectError(
        await adminJson('PATCH', `/keys/${pro.key.id}`, { concurrentRequests: 100 }),
        400,
        'invalid_request',
        'set by the plan',
      );
    });

    it.each([
      [{ plan: 'free', concurrentRequests: 10 }, 'set by the plan'],
      [{ plan: 'enterprise', perMinute: 5, perDay: 5, concurrentRequests: 0 }, 'concurrentRequests'],
      [{ plan: 'enterprise', perMinute: 5, perDay: 5, concurrentRequests: 1.5 }, 'concurrentRequests'],
      [{}, 'plan'],
      [{ plan: 'gold' }, 'plan must be one of'],
      [{ plan: 'pro', scope: ['pets:read'] }, 'scope'],
      [{ plan: 'pro', scopes: [] }, 'scopes'],
      [{ plan: 'pro', scopes: ['pets:delete'] }, 'scopes'],
      [{ plan: 'pro', scopes: ['pets:read', 'pets:read'] }, 'repeat'],
      [{ plan: 'pro', perMinute: 5 }, 'enterprise'],
      [{ plan: 'enterprise', perMinute: 5 }, 'per-minute and per-day'],
      [{ plan: 'enterprise', perMinute: 0, perDay: 5 }, 'perMinute'],
      [{ plan: 'enterprise', perMinute: 2 ** 31, perDay: 5 }, 'perMinute'],
      [{ plan: 'pro', expiresAt: 'tomorrow' }, 'expiresAt'],
      [{ plan: 'pro', expiresAt: '2001-01-01T00:00:00Z' }, 'future'],
      [{ plan: 'pro', name: '' }, 'name'],
      [{ plan: 'pro', name: 'x'.repeat(201) }, 'name'],
    ])('refuses to create %j (400, nothing written)', async (body, message) => {
      const before = (await server.db.apiKeys.list({})).length;
      await expectError(await adminJson('POST', '/keys', body), 400, 'invalid_request', message);
      expect((await server.db.apiKeys.list({})).length).toBe(before);
    });

    it('refuses bad requests with clear errors', async () => {
      const { key } = await createKey({ plan: 'pro' });
      await expectError(
        await admin('/keys', { method: 'POST', body: '{"plan":', headers: { 'Content-Type': 'application/json' } }),
        400,
        'invalid_request',
      );
      await expectError(
        await admin('/keys', {
          method: 'POST',
          body: 'plan=pro',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        }),
        415,
        'unsupported_media_type',
      );
      await expectError(await adminJson('PATCH', `/keys/${key.id}`, {}), 400, 'invalid_request', 'at least one field');
      await expectError(
        await adminJson('PATCH', `/keys/${key.id}`, { perDay: 5 }),
        400,
        'invalid_request',
        'enterprise',
      );
      await expectError(await adminJson('PATCH', `/keys/${key.id}`, { plan: 'free' }), 400, 'invalid_request', 'plan');
      await expectError(
        await adminJson('POST', `/keys/${key.id}/rotate`, { overlapSeconds: -1 }),
        400,
        'invalid_request',
        'overlapSeconds',
      );
      await expectError(await admin('/keys/abc'), 400, 'invalid_request', 'id');
      await expectError(await admin('/keys/999999'), 404, 'not_found');
      await expectError(await admin('/keys/999999/usage'), 404, 'not_found');
      await expectError(await admin('/keys?limit=0'), 400, 'invalid_request', 'limit');
      await expectError(await admin('/keys?cursor=forged'), 400, 'invalid_request', 'cursor');
      await expectError(await admin('/keys/1', { method: 'PUT' }), 405, 'method_not_allowed');
    });

    it('wants the admin token (401 otherwise), is limited per address and charged to no public plan', async () => {
      const { secret } = await createKey({ plan: 'pro' });
      await expectError(await fetch(`${server.url}/admin/v1/keys`), 401, 'unauthorized');
      await expectError(await fetch(`${server.url}/admin/v1/keys`, { headers: auth(secret) }), 401, 'unauthorized');
      await expectError(
        await fetch(`${server.url}/admin/v1/keys`, { headers: auth(`${ADMIN_TOKEN}x`) }),
        401,
        'unauthorized',
      );
      const keyless = async () => Number((await fetch(`${server.url}/v1/pets`)).headers.get('x-ratelimit-remaining'));
      const before = await keyless();
      const first = await admin('/keys?limit=1');
      expect(first.status).toBe(200);
      const adminRemaining = Number(first.headers.get('x-ratelimit-remaining'));
      expect(Number(first.headers.get('x-ratelimit-limit'))).toBeGreaterThan(adminRemaining);
      expect(Number((await admin('/keys?limit=1')).headers.get('x-ratelimit-remaining'))).toBe(adminRemaining - 1);
      // The address's public (Free) counter moved by the second keyless request only; the key's Pro counter not at all.
      expect(await keyless()).toBe(before - 1);
      const status = RateLimitStatus.parse(
        await (await fetch(`${server.url}/v1/rate_limit`, { headers: auth(secret) })).json(),
      );
      expect(status.minute.remaining).toBe(300);
    });

    it('logs every action with its key id and never a secret', async () => {
      const { key, secret } = await createKey({ plan: 'pro' });
      const rotated = CreatedApiKey.parse(
        await (await adminJson('POST', `/keys/${key.id}/rotate`, { overlapSeconds: 0 })).json(),
      );
      await admin(`/keys/${rotated.key.id}/revoke`, { method: 'POST' });
      const actions = log.records().filter((r) => r.msg === 'admin action');
      expect(actions).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ action: 'key.create', keyId: key.id, via: 'api' }),
          expect.objectContaining({ action: 'key.rotate', keyId: key.id, newKeyId: rotated.key.id }),
          expect.objectContaining({ action: 'key.revoke', keyId: rotated.key.id }),
        ]),
      );
      for (const line of log.lines) {
        expect(line).not.toContain(secret.slice(4));
        expect(line).not.toContain(rotated.secret.slice(4));
        expect(line).not.toContain(ADMIN_TOKEN);
      }
    });
  });
});

describe('admin API without ADMIN_TOKEN', () => {
  const ctx = useTestServer('sqlite');
  it('answers 404 on every admin route, token or not', async () => {
    for (const [method, path] of [
      ['GET', '/admin/v1/keys'],
      ['POST', '/admin/v1/keys'],
      ['GET', '/admin/v1/keys/1'],
      ['DELETE', '/admin/v1/keys/1/ban'],
    ] as const) {
      const res = await fetch(`${ctx.server.url}${path}`, { method, headers: auth(ADMIN_TOKEN) });
      await expectError(res, 404, 'not_found');
    }
  });
});
