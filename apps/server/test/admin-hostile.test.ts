import { CreatedApiKey } from '@animal-store/contract';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { adminRequest, ADMIN_TOKEN, keysTable } from './admin-helpers.js';
import { PROVIDERS, useTestServer, type TestServer } from './helpers.js';
import {
  body,
  dateTime,
  expectHostileCallHarmless,
  headers,
  hostileCalls,
  integerField,
  listQuery,
  name,
  objectOf,
  pathId,
  type Field,
  type HostileCall,
} from './hostile-arbitraries.js';

const plan: Field = {
  ok: fc.constantFrom('free', 'pro', 'business'),
  bad: fc.constantFrom('enterprise', 'Pro', 'gold', '', null, 1),
};
const scopes: Field = {
  ok: fc.subarray(['pets:read', 'pets:write'], { minLength: 1 }),
  bad: fc.oneof(
    fc.array(fc.constantFrom('pets:read', 'pets:write', 'pets:*', 'admin', '', 'PETS:READ'), { maxLength: 4 }),
    fc.constantFrom('pets:read', null, {}, 1),
  ),
};
// Limits are the enterprise plan's own: sent right only to the enterprise key, so they are mostly sent wrong here.
const keyFields = {
  name,
  scopes,
  expiresAt: dateTime,
  perMinute: { bad: integerField.bad },
  perDay: { bad: integerField.bad },
  concurrentRequests: { bad: integerField.bad },
};
const createBody = body(objectOf({ plan, ...keyFields }, ['plan']));
const patchBody = body(objectOf(keyFields));
const rotateBody = body(
  objectOf({ overlapSeconds: { ok: fc.integer({ min: 0, max: 2_592_000 }), bad: integerField.bad } }),
);

/** How the request authenticates: the token (mostly), none, a wrong one, the token under another scheme. */
const authorization = fc.oneof(
  { weight: 12, arbitrary: fc.constant(`Bearer ${ADMIN_TOKEN}`) },
  { weight: 1, arbitrary: fc.constant(`bearer ${ADMIN_TOKEN}`) },
  { weight: 1, arbitrary: fc.constantFrom(undefined, `Basic ${ADMIN_TOKEN}`, 'Bearer', `Bearer ${ADMIN_TOKEN}x`) },
);

/** Every admin route with hostile parameters, ids and bodies, and methods the routes do not have. */
function adminCall(ids: number[]): fc.Arbitrary<HostileCall> {
  const id = pathId(fc.constantFrom(...ids, 999_999));
  const none = fc.constant(undefined);
  const byId = (suffix: string) => id.map((i) => `/keys/${i}${suffix}`);
  return hostileCalls([
    ['POST', fc.constant('/keys'), createBody],
    ['GET', listQuery.map((query) => `/keys${query}`), none],
    ['GET', byId(''), none],
    ['PATCH', byId(''), patchBody],
    ['POST', byId('/revoke'), fc.oneof(none, patchBody)],
    ['POST', byId('/rotate'), fc.oneof(none, rotateBody)],
    ['GET', byId('/usage'), none],
    ['DELETE', byId('/ban'), fc.oneof(none, patchBody)],
    [
      'PUT',
      fc.constantFrom('/keys', '/keys/1', '/keys/1/rotate', '/keys/1/ban', '/Keys', '/keys/', '/keys/1/'),
      patchBody,
    ],
    ['DELETE', fc.constantFrom('/keys', '/keys/1', '/keys/1/revoke'), none],
  ]);
}

/**
 * #24 "What to do": the admin API's hostile-input suite, like /v1's (robustness.test.ts, v1-hostile.test.ts). Random
 * and malformed bodies, parameters, ids, cursors, headers and dates against every admin route: never a 5xx or a reset,
 * every 4xx an Error body, and no key created or changed by a refused request (the whole table compared).
 */
describe.each(PROVIDERS)('the admin API under hostile input, on %s', (provider) => {
  const ctx = useTestServer(provider, { adminToken: ADMIN_TOKEN });
  let server: TestServer;
  const ids: number[] = [];
  beforeAll(async () => {
    server = ctx.server;
    const create = async (value: unknown) => {
      const res = await adminRequest(server, 'POST', '/keys', value);
      return CreatedApiKey.parse(await res.json()).key.id;
    };
    ids.push(await create({ plan: 'pro', name: 'plain' }));
    ids.push(await create({ plan: 'enterprise', perMinute: 100, perDay: 1000, expiresAt: '2031-01-01T00:00:00Z' }));
    const revoked = await create({ plan: 'free' });
    expect((await adminRequest(server, 'POST', `/keys/${revoked}/revoke`)).status).toBe(200);
    const rotated = await create({ plan: 'business' });
    const successor = await adminRequest(server, 'POST', `/keys/${rotated}/rotate`, { overlapSeconds: 3600 });
    ids.push(revoked, rotated, CreatedApiKey.parse(await successor.json()).key.id);
  });

  it('answers every call under 500, a 4xx with an Error body, and a refused call changes no key', async () => {
    await fc.assert(
      fc.asyncProperty(adminCall(ids), headers, authorization, async (call, sentHeaders, auth) => {
        const sent = { ...sentHeaders, ...(auth === undefined ? {} : { Authorization: auth }) };
        await expectHostileCallHarmless(`${server.url}/admin/v1${call.path}`, call, sent, () => keysTable(server));
      }),
      { numRuns: 220 },
    );
  });
});
