import { ApiKey, CreatedApiKey } from '@animal-store/contract';
import { beforeAll, describe, expect, it } from 'vitest';
import { adminRequest, ADMIN_TOKEN } from './admin-helpers.js';
import { auth, jsonPost, PROVIDERS, useTestServer, type TestServer } from './helpers.js';

/** #24 item 10: `lastUsedAt` is the last ACCEPTED request (the contract says so): a refusal is no use. */
describe.each(PROVIDERS)('last use of a key, on %s', (provider) => {
  const ctx = useTestServer(provider, { adminToken: ADMIN_TOKEN });
  let server: TestServer;
  beforeAll(() => {
    server = ctx.server;
  });
  const lastUsed = async (id: number) =>
    ApiKey.parse(await (await adminRequest(server, 'GET', `/keys/${id}`)).json()).lastUsedAt;

  it('is not set by a 403 for a missing scope, nor by an unknown path', async () => {
    const res = await adminRequest(server, 'POST', '/keys', { plan: 'pro', scopes: ['pets:read'] });
    const { key, secret } = CreatedApiKey.parse(await res.json());
    expect((await fetch(`${server.url}/v1/pets`, jsonPost(secret, { name: 'No', categoryId: 1 }))).status).toBe(403);
    expect((await fetch(`${server.url}/v1/nothing-here`, { headers: auth(secret) })).status).toBe(404);
    await server.flushLastUsed();
    expect(await lastUsed(key.id)).toBeNull();
    expect((await fetch(`${server.url}/v1/pets`, { headers: auth(secret) })).status).toBe(200);
    await server.flushLastUsed();
    expect(await lastUsed(key.id)).not.toBeNull();
  });
});
