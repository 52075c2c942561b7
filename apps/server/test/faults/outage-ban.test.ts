import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, startMain, type MainProcess } from '../main-process.js';
import { postgresAvailable, startPrivateDatabase, type PrivatePostgres } from './private-postgres.js';
import { expectDependency503, noStacks } from './expectations.js';

// Ports reserved for #24's private PostgreSQL: 15436-15437.
const PORT = 15436;

/**
 * #24 item 13: a database outage is the service's failure, never the client's. With the key cache expiring during the
 * outage, the key lookups that fail must not be charged to the client's address (nor its key), so no ban follows, and
 * the outage ends for every client as soon as the database is back.
 */
describe.skipIf(!postgresAvailable())('a PostgreSQL outage charges and bans no client', () => {
  let postgres: PrivatePostgres;
  let server: MainProcess;
  let key: string;

  beforeAll(async () => {
    const started = await startPrivateDatabase(PORT);
    postgres = started.postgres;
    const env = {
      ...started.env,
      // Short, so lookups fail during the outage, as they do once any cache expires.
      KEY_CACHE_TTL_MS: '500',
      RATE_LIMIT_BAN_THRESHOLD: '10',
    };
    key = createKey(env, 'pro');
    server = await startMain(env);
  }, 90_000);

  afterAll(async () => {
    await server?.kill();
    await postgres?.destroy();
  });

  const get = (path: string, headers: Record<string, string> = { Authorization: `Bearer ${key}` }) =>
    fetch(`${server.url}${path}`, { headers });

  it('answers 503 (never 429) for the whole outage, then 200 at once, and charged only what it served', async () => {
    let served = 0;
    const expectServed = async (res: Response) => {
      expect(res.status, await res.clone().text()).toBe(200);
      served++;
    };
    await expectServed(await get('/v1/pets'));
    await postgres.stop();
    try {
      // 20 requests a second from one address, for longer than the Free limits of the address would allow.
      for (let i = 0; i < 120; i++) {
        const started = Date.now();
        await expectDependency503(await get('/v1/pets'));
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, 50 - (Date.now() - started))));
      }
      const ready = await get('/readyz', {});
      expect(ready.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
      expect(ready.status).toBe(503);
    } finally {
      await postgres.start();
    }
    // Back for every client as soon as the pool reconnects: never a 429 in between.
    let back = false;
    for (let i = 0; i < 100 && !back; i++) {
      const res = await get('/v1/pets');
      back = res.status === 200;
      if (back) served++;
      else {
        await expectDependency503(res);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    expect(back).toBe(true);
    await expectServed(await get('/v1/pets'));
    expect((await get('/readyz', {})).status).toBe(200);
    // The address is not banned either: a keyless request is a plain 401.
    expect((await get('/v1/pets', {})).status).toBe(401);
    // Neither the key nor the address was charged for the 503s.
    const status = (await (await get('/v1/rate_limit')).json()) as { day: { limit: number; remaining: number } };
    expect(status.day.remaining).toBeGreaterThanOrEqual(status.day.limit - served);
    noStacks(server);
  });
});
