/** The admin client and the rate-limit status against the real built server, started with an ADMIN_TOKEN. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnimalStoreAdminClient } from './admin.js';
import { createAnimalStoreClient } from './client.js';
import { type RealServer, startRealServer } from './test-support/server.js';

const ADMIN_TOKEN = 'client-tests-admin-token-0123456789abcdef';
let server: RealServer;

beforeAll(async () => {
  server = await startRealServer({ adminToken: ADMIN_TOKEN });
}, 60_000);
afterAll(() => server?.stop());

describe('createAnimalStoreAdminClient', () => {
  it('creates, rotates, inspects and revokes keys; the keys work with the API client', async () => {
    const admin = createAnimalStoreAdminClient({
      baseUrl: server.origin,
      adminToken: ADMIN_TOKEN,
      retry: { maxRetries: 0 },
    });
    const created = await admin.createKey({ body: { plan: 'pro', name: 'reporting', scopes: ['pets:read'] } });
    if (created.status !== 201) throw new Error(JSON.stringify(created.body));
    expect(created.body.key).toMatchObject({ plan: 'pro', name: 'reporting', scopes: ['pets:read'], perMinute: 300 });

    const client = createAnimalStoreClient({
      baseUrl: server.baseUrl,
      apiKey: created.body.secret,
      retry: { maxRetries: 0 },
    });
    expect((await client.listPets()).status).toBe(200);
    const status = await client.getRateLimit();
    if (status.status !== 200) throw new Error(JSON.stringify(status.body));
    expect(status.body).toMatchObject({
      plan: 'pro',
      minute: { limit: 300, remaining: 299 },
      day: { limit: 10_000, remaining: 9_999 },
    });
    const refused = await client.createPet({ body: { name: 'Rex', categoryId: 1 } });
    expect(refused.status).toBe(403);
    if (refused.status === 403) expect(refused.body.code).toBe('insufficient_scope');

    const rotated = await admin.rotateKey({ params: { id: created.body.key.id }, body: { overlapSeconds: 0 } });
    if (rotated.status !== 201) throw new Error(JSON.stringify(rotated.body));
    expect((await client.listPets()).status).toBe(401);
    const usage = await admin.getKeyUsage({ params: { id: rotated.body.key.id } });
    // The lineage's charged requests: the list and the refused create (a 403 is charged like any answer).
    expect(usage.status === 200 && usage.body.day.used).toBe(2);

    const revoked = await admin.revokeKey({ params: { id: rotated.body.key.id } });
    expect(revoked.status === 200 && revoked.body.revokedAt).toBeTruthy();
    const listed = await admin.listKeys({ query: { limit: 10 } });
    if (listed.status !== 200) throw new Error(JSON.stringify(listed.body));
    const ids = listed.body.map((k) => k.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(ids).toEqual(expect.arrayContaining([created.body.key.id, rotated.body.key.id]));
    expect((await admin.liftKeyBan({ params: { id: created.body.key.id } })).status).toBe(204);
  });

  it('gets a typed 401 with a wrong token', async () => {
    const admin = createAnimalStoreAdminClient({
      baseUrl: server.baseUrl,
      adminToken: `${ADMIN_TOKEN}-wrong`,
      retry: { maxRetries: 0 },
    });
    const res = await admin.getKey({ params: { id: 1 } });
    expect(res.status).toBe(401);
    if (res.status === 401) expect(res.body.code).toBe('unauthorized');
  });
});
