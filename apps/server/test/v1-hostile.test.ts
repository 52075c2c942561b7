import { MAX_SAFE_ID } from '@animal-store/contract';
import fc from 'fast-check';
import { beforeAll, describe, it } from 'vitest';
import { auth, jsonPost, PROVIDERS, useTestServer } from './helpers.js';
import * as hostile from './hostile-arbitraries.js';

const categoryId: hostile.Field = {
  ok: fc.integer({ min: 1, max: 1000 }),
  bad: fc.oneof(
    fc.constantFrom(0, -1, 1.5, MAX_SAFE_ID + 1, 2 ** 64, 1e300, '1', null, [], {}),
    fc.bigInt({ min: 2n ** 53n, max: 2n ** 70n }).map(Number),
  ),
};
const status: hostile.Field = {
  ok: fc.constantFrom('available', 'pending', 'sold'),
  bad: fc.constantFrom('Available', 'gone', '', null, 1, ['sold'], { $ne: null }),
};
const petBody = hostile.body(hostile.objectOf({ name: hostile.name, categoryId, status }, ['name', 'categoryId']));

/** Mostly with the key (keyless requests are limited per address at Free limits: a few walk that path). */
const keyed = fc.oneof({ weight: 7, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) });

/** Every /v1 route with hostile parameters, ids and bodies, and methods and paths the API does not have. */
function v1Call(ids: number[]): fc.Arbitrary<hostile.HostileCall> {
  const none = fc.constant(undefined);
  return hostile.hostileCalls([
    ['POST', fc.constant('/v1/pets'), petBody, 3],
    ['GET', hostile.listQuery.map((query) => `/v1/pets${query}`), none],
    ['GET', hostile.pathId(fc.constantFrom(...ids, 999_999)).map((id) => `/v1/pets/${id}`), none],
    ['GET', fc.constantFrom('/v1/rate_limit', '/v1/openapi.json', '/v1/Pets', '/v1/pets/', '/v1/'), none],
    ['PATCH', fc.constantFrom('/v1/pets', '/v1/pets/1', '/v1/rate_limit'), petBody],
  ]);
}

/**
 * /v1 under the same generators as the admin API (admin-hostile.test.ts), beside robustness.test.ts's fixed pieces:
 * never a 5xx or a reset, every 4xx an Error body, and no pet created by a refused request.
 */
describe.each(PROVIDERS)('/v1 under hostile input, on %s', (provider) => {
  const ctx = useTestServer(
    provider,
    {},
    { plan: 'enterprise', limits: { perMinute: 1_000_000, perDay: 10_000_000, concurrentRequests: 100 } },
  );
  const ids: number[] = [];
  beforeAll(async () => {
    const res = await fetch(`${ctx.server.url}/v1/pets`, jsonPost(ctx.key, { name: 'Rex', categoryId: 1 }));
    ids.push(((await res.json()) as { id: number }).id);
  });

  /** Every pet, in order: compared before and after a refused request. */
  const pets = async () => {
    const res = await fetch(`${ctx.server.url}/v1/pets?limit=100`, { headers: auth(ctx.key) });
    return res.text();
  };

  it('answers every call under 500, a 4xx with an Error body, and a refused call creates no pet', async () => {
    await fc.assert(
      fc.asyncProperty(v1Call(ids), hostile.headers, keyed, async (call, sentHeaders, withKey) => {
        const sent = withKey ? auth(ctx.key, sentHeaders) : sentHeaders;
        await hostile.expectHostileCallHarmless(`${ctx.server.url}${call.path}`, call, sent, pets);
      }),
      { numRuns: 200 },
    );
  });
});
