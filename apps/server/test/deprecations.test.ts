/**
 * The deprecated getPet as operators and apps see it, with an injected clock: calls counted in /metrics by client
 * version, the calling key's last deprecated call in the admin API (written in batches), and from the Sunset instant a
 * 410 `gone` with the successor Link.
 */
import { GET_PET_DEPRECATION, Pet, RELEASES } from '@animal-store/contract';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, adminRequest } from './admin-helpers.js';
import { auth, expectError, jsonPost, PROVIDERS, useTestServer, type TestServer } from './helpers.js';

const SUNSET = GET_PET_DEPRECATION.sunsetAt.getTime();
const CLIENT = (version: string) => `animal-store-client/${version} node/24.11.0`;

describe.each(PROVIDERS)('getPet, deprecated then retired, on %s', (provider) => {
  let clock = SUNSET - 3 * 60 * 60_000 + 17_000;
  const ctx = useTestServer(provider, { adminToken: ADMIN_TOKEN, keyCacheTtlMs: 0, now: () => clock });
  let server: TestServer;
  let caller: { id: number; secret: string };
  let bystander: { id: number; secret: string };
  let pet: Pet;

  const newKey = async () => {
    const res = await adminRequest(server, 'POST', '/keys', { plan: 'pro' });
    const body = (await res.json()) as { key: { id: number }; secret: string };
    return { id: body.key.id, secret: body.secret };
  };
  const getPet = (key: string, userAgent?: string) =>
    fetch(`${server.url}/v1/pets/${pet.id}`, { headers: auth(key, userAgent ? { 'User-Agent': userAgent } : {}) });
  const calls = async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const found: Record<string, number> = {};
    for (const [, labels, value] of text.matchAll(/^animal_store_deprecated_operation_calls_total\{([^}]*)\} (\S+)$/gm))
      found[labels!] = Number(value);
    return found;
  };
  const keyRow = async (id: number) =>
    (await (await adminRequest(server, 'GET', `/keys/${id}`)).json()) as { lastDeprecatedCallAt: string | null };

  beforeAll(async () => {
    server = ctx.server;
    [caller, bystander] = [await newKey(), await newKey()];
    pet = Pet.parse(
      await (await fetch(`${server.url}/v1/pets`, jsonPost(caller.secret, { name: 'Old', categoryId: 2 }))).json(),
    );
  });

  it('counts each call by client version (a release, else other) and notes the key, in batches', async () => {
    expect((await getPet(caller.secret, CLIENT(RELEASES[0]!))).status).toBe(200);
    expect((await getPet(caller.secret, CLIENT(RELEASES[0]!))).status).toBe(200);
    expect((await getPet(caller.secret, CLIENT('0.0.0-not-released'))).status).toBe(200);
    expect((await getPet(caller.secret, 'curl/8.5.0')).status).toBe(200);
    expect((await fetch(`${server.url}/v1/pets?limit=1`, { headers: auth(bystander.secret) })).status).toBe(200);
    expect(await calls()).toEqual({
      [`operation="getPet",client_version="${RELEASES[0]}"`]: 2,
      'operation="getPet",client_version="other"': 2,
    });

    // Nothing written per request: the minute appears once the batch is flushed.
    expect((await keyRow(caller.id)).lastDeprecatedCallAt).toBeNull();
    await server.flushLastUsed();
    const minute = new Date(Math.floor(clock / 60_000) * 60_000).toISOString();
    expect((await keyRow(caller.id)).lastDeprecatedCallAt).toBe(minute);
    expect((await keyRow(bystander.id)).lastDeprecatedCallAt).toBeNull();
  });

  it('answers 410 gone with the successor Link from the Sunset instant on, and still counts the call', async () => {
    clock = SUNSET - 1;
    expect((await getPet(caller.secret)).status).toBe(200);
    clock = SUNSET;
    const gone = await getPet(caller.secret, CLIENT(RELEASES[0]!));
    expect(gone.headers.get('link')).toBe('</v1/pets>; rel="successor-version"');
    expect(gone.headers.get('sunset')).toBe(GET_PET_DEPRECATION.sunsetHeader);
    await expectError(gone, 410, 'gone', 'GET /v1/pets with a status filter');
    // Unknown ids and other keys are gone too: the operation is retired, not the pet.
    await expectError(await fetch(`${server.url}/v1/pets/999999`, { headers: auth(bystander.secret) }), 410, 'gone');
    // Without a valid key it is still a 401 first.
    expect((await fetch(`${server.url}/v1/pets/${pet.id}`)).status).toBe(401);
    expect((await calls())[`operation="getPet",client_version="${RELEASES[0]}"`]).toBe(3);
    await server.flushLastUsed();
    expect((await keyRow(bystander.id)).lastDeprecatedCallAt).toBe(new Date(SUNSET).toISOString());
  });
});
