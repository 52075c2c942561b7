import { ApiKey, CreatedApiKey } from '@animal-store/contract';
import { createMemoryStore } from '@animal-store/rate-limit';
import { beforeAll, describe, expect, it } from 'vitest';
import { adminRequest, ADMIN_TOKEN, keysTable } from './admin-helpers.js';
import { auth, expectError, jsonPost, PROVIDERS, useTestServer, type TestServer } from './helpers.js';

const T0 = Date.UTC(2030, 0, 1, 12, 0, 30);
const HOUR = 3_600_000;

/**
 * #24 items 4-6: a rotation lineage (a key and its successors) behaves as one key with at most two secrets: one
 * expiry, one set of limits, one ban, one idempotency scope; rotation and expiry end what they end for good.
 */
describe.each(PROVIDERS)('a rotation lineage on %s', (provider) => {
  let clock = T0;
  const ctx = useTestServer(provider, {
    adminToken: ADMIN_TOKEN,
    keyCacheTtlMs: 60_000,
    now: () => clock,
    rateLimit: { store: createMemoryStore({ now: () => clock }), banThreshold: 10, banSeconds: 600 },
  });
  let server: TestServer;
  beforeAll(() => {
    server = ctx.server;
  });

  const create = async (body: Record<string, unknown>) => {
    const res = await adminRequest(server, 'POST', '/keys', body);
    expect(res.status).toBe(201);
    return CreatedApiKey.parse(await res.json());
  };
  const rotate = async (id: number, overlapSeconds: number) => {
    const res = await adminRequest(server, 'POST', `/keys/${id}/rotate`, { overlapSeconds });
    expect(res.status, await res.clone().text()).toBe(201);
    return CreatedApiKey.parse(await res.json());
  };
  const show = async (id: number) => ApiKey.parse(await (await adminRequest(server, 'GET', `/keys/${id}`)).json());
  const status = async (secret: string) => (await fetch(`${server.url}/v1/pets`, { headers: auth(secret) })).status;
  const later = async <T>(ms: number, fn: () => Promise<T>): Promise<T> => {
    clock += ms;
    try {
      return await fn();
    } finally {
      clock -= ms;
    }
  };

  describe('rotating a key whose predecessor is still in its overlap (item 4)', () => {
    it('gives the new key the lineage expiry (none here), never the overlap deadline, and ends the eldest key', async () => {
      const first = await create({ plan: 'pro', name: 'lineage' });
      const second = await rotate(first.key.id, 3600);
      expect((await show(first.key.id)).expiresAt).toBe(new Date(clock + HOUR).toISOString());
      const third = await rotate(second.key.id, 3600);
      expect(third.key.expiresAt).toBeNull();
      // At most two keys of a lineage are active: the eldest ended when the third was made.
      expect((await show(first.key.id)).expiresAt).toBe(new Date(clock).toISOString());
      expect((await show(second.key.id)).expiresAt).toBe(new Date(clock + HOUR).toISOString());
      await expectError(
        await fetch(`${server.url}/v1/pets`, { headers: auth(first.secret) }),
        401,
        'unauthorized',
        'expired',
      );
      expect(await status(second.secret)).toBe(200);
      expect(await status(third.secret)).toBe(200);
      // Long after every overlap, the lineage lives on in its newest key.
      await later(30 * 86_400_000, async () => {
        expect(await status(third.secret)).toBe(200);
        expect(await status(second.secret)).toBe(401);
      });
    });

    it('keeps a lineage expiry through every rotation, and no overlap outlives it', async () => {
      const end = new Date(clock + 2 * HOUR).toISOString();
      const first = await create({ plan: 'pro', expiresAt: end });
      const second = await rotate(first.key.id, 3600);
      expect(second.key.expiresAt).toBe(end);
      const third = await rotate(second.key.id, 86_400);
      expect(third.key.expiresAt).toBe(end);
      expect((await show(second.key.id)).expiresAt).toBe(end);
    });

    it('refuses to rotate a key that was already rotated (409 naming its successor), changing nothing', async () => {
      const first = await create({ plan: 'pro' });
      const second = await rotate(first.key.id, 3600);
      const before = await keysTable(server);
      const res = await adminRequest(server, 'POST', `/keys/${first.key.id}/rotate`, { overlapSeconds: 60 });
      await expectError(res, 409, 'conflict', String(second.key.id));
      expect(await keysTable(server)).toBe(before);
    });
  });

  describe('PATCH cannot undo what rotation or expiry ended (item 5)', () => {
    it('refuses to clear or move the end of a key rotated out (409); its overlap still ends', async () => {
      const first = await create({ plan: 'pro' });
      await rotate(first.key.id, 60);
      const before = await keysTable(server);
      for (const expiresAt of [null, new Date(clock + 10 * HOUR).toISOString()]) {
        await expectError(
          await adminRequest(server, 'PATCH', `/keys/${first.key.id}`, { expiresAt }),
          409,
          'conflict',
          'rotated',
        );
      }
      expect(await keysTable(server)).toBe(before);
      await later(60_000, async () => expect(await status(first.secret)).toBe(401));
    });

    it('refuses to revive an expired key (409), whatever the change', async () => {
      const key = await create({ plan: 'pro', expiresAt: new Date(clock + 60_000).toISOString() });
      await later(60_000, async () => {
        const before = await keysTable(server);
        for (const change of [{ expiresAt: null }, { expiresAt: new Date(clock + HOUR).toISOString() }, { name: 'x' }])
          await expectError(
            await adminRequest(server, 'PATCH', `/keys/${key.key.id}`, change),
            409,
            'conflict',
            'expired',
          );
        expect(await keysTable(server)).toBe(before);
        expect(await status(key.secret)).toBe(401);
      });
    });

    it('applies a change of limits, scopes or name to both keys of the lineage', async () => {
      const first = await create({ plan: 'enterprise', perMinute: 50, perDay: 500 });
      const second = await rotate(first.key.id, 3600);
      const res = await adminRequest(server, 'PATCH', `/keys/${second.key.id}`, {
        perMinute: 7,
        scopes: ['pets:read'],
        name: 'renamed',
      });
      expect(res.status).toBe(200);
      expect(await show(first.key.id)).toMatchObject({ perMinute: 7, scopes: ['pets:read'], name: 'renamed' });
      const old = await fetch(`${server.url}/v1/pets`, { headers: auth(first.secret) });
      expect(old.headers.get('x-ratelimit-limit')).toBe('7');
      expect((await fetch(`${server.url}/v1/pets`, jsonPost(first.secret, { name: 'a', categoryId: 1 }))).status).toBe(
        403,
      );
    });
  });

  describe('Idempotency-Key scoped to the lineage (item 6)', () => {
    it('a retry sent with the rotated key replays the first answer: no second pet', async () => {
      const first = await create({ plan: 'pro' });
      const body = { name: 'Once', categoryId: 6 };
      const headers = { 'Idempotency-Key': `lineage-${provider}-${Date.now()}` };
      const sent = (secret: string, b: unknown = body) =>
        fetch(`${server.url}/v1/pets`, {
          method: 'POST',
          headers: auth(secret, { ...headers, 'Content-Type': 'application/json' }),
          body: JSON.stringify(b),
        });
      const created = await sent(first.secret);
      expect(created.status).toBe(201);
      const text = await created.text();
      const second = await rotate(first.key.id, 3600);
      const replay = await sent(second.secret);
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(await replay.text()).toBe(text);
      expect(replay.headers.get('location')).toBe(created.headers.get('location'));
      await expectError(await sent(second.secret, { ...body, name: 'Other' }), 422, 'idempotency_key_reused');
      // Another lineage may use the same Idempotency-Key for its own pet.
      const stranger = await create({ plan: 'pro' });
      const own = await sent(stranger.secret);
      expect(own.status).toBe(201);
      expect(own.headers.get('idempotent-replayed')).toBeNull();
    });
  });
});
