import { MAX_SAFE_ID } from '@animal-store/contract';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { auth, PROVIDERS, useTestServer, type TestServer } from './helpers.js';
import {
  body,
  expectNoServerError,
  headers,
  listQuery,
  name,
  objectOf,
  pathId,
  type Field,
} from './hostile-arbitraries.js';

const categoryId: Field = {
  ok: fc.integer({ min: 1, max: 1000 }),
  bad: fc.oneof(
    fc.constantFrom(0, -1, 1.5, MAX_SAFE_ID + 1, 2 ** 64, 1e300, '1', null, [], {}),
    fc.bigInt({ min: 2n ** 53n, max: 2n ** 70n }).map(Number),
  ),
};
const status: Field = {
  ok: fc.constantFrom('available', 'pending', 'sold'),
  bad: fc.constantFrom('Available', 'gone', '', null, 1, ['sold'], { $ne: null }),
};
const petBody = body(objectOf({ name, categoryId, status }, ['name', 'categoryId']));

/** Mostly with the key (keyless requests are limited per address at Free limits: a few walk that path). */
const keyed = fc.oneof({ weight: 7, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) });

interface Call {
  method: string;
  path: string;
  body: string | undefined;
}

function v1Call(ids: number[]): fc.Arbitrary<Call> {
  const none = fc.constant(undefined);
  const call = (method: string, path: fc.Arbitrary<string>, sent: fc.Arbitrary<string | undefined>) =>
    fc.record({ method: fc.constant(method), path, body: sent });
  return fc.oneof(
    { weight: 3, arbitrary: call('POST', fc.constant('/v1/pets'), petBody) },
    call(
      'GET',
      listQuery.map((query) => `/v1/pets${query}`),
      none,
    ),
    call(
      'GET',
      pathId(fc.constantFrom(...ids, 999_999)).map((id) => `/v1/pets/${id}`),
      none,
    ),
    call('GET', fc.constantFrom('/v1/rate_limit', '/v1/openapi.json', '/v1/Pets', '/v1/pets/', '/v1/'), none),
    call('PATCH', fc.constantFrom('/v1/pets', '/v1/pets/1', '/v1/rate_limit'), petBody),
  );
}

/**
 * /v1 under the same generators as the admin API (admin-hostile.test.ts), beside robustness.test.ts's fixed pieces:
 * never a 5xx or a reset, every 4xx an Error body, and no pet created by a refused request.
 */
describe.each(PROVIDERS)('/v1 under hostile input, on %s', (provider) => {
  const ctx = useTestServer(provider);
  let server: TestServer;
  let key: string;
  const ids: number[] = [];
  beforeAll(async () => {
    server = ctx.server;
    key = await server.key('enterprise', { perMinute: 1_000_000, perDay: 10_000_000, concurrentRequests: 100 });
    const res = await fetch(`${server.url}/v1/pets`, {
      method: 'POST',
      headers: auth(key, { 'Content-Type': 'application/json' }),
      body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
    });
    ids.push(((await res.json()) as { id: number }).id);
  });

  /** Every pet, in order: compared before and after a refused request. */
  const pets = async () => {
    const res = await fetch(`${server.url}/v1/pets?limit=100`, { headers: auth(key) });
    return res.text();
  };

  it('answers every call under 500, a 4xx with an Error body, and a refused call creates no pet', async () => {
    await fc.assert(
      fc.asyncProperty(v1Call(ids), headers, keyed, async (call, sentHeaders, withKey) => {
        const before = await pets();
        const where = `${call.method} ${call.path} ${JSON.stringify(sentHeaders)} ${withKey} ${call.body ?? ''}`;
        const res = await fetch(`${server.url}${call.path}`, {
          method: call.method,
          headers: withKey ? auth(key, sentHeaders) : sentHeaders,
          ...(call.body === undefined ? {} : { body: call.body }),
        });
        const answered = res.status;
        await expectNoServerError(res, where);
        if (answered >= 400) expect(await pets(), where).toBe(before);
      }),
      { numRuns: 200 },
    );
  });
});
