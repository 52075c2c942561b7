import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killProcess, startRedisServer } from '@animal-store/rate-limit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, startMain, type MainProcess } from '../main-process.js';

// Ports reserved for #24's private Redis: 6393.
const PORT = 6393;

/** #24 item 18: the fallback counter counts switches (one per outage), not the requests an outage touches. */
describe('Redis outages counted once each', () => {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-faults-fallbacks-'));
  const env = {
    DATABASE_URL: `file:${join(dir, 'db.sqlite')}`,
    REDIS_URL: `redis://127.0.0.1:${PORT}`,
    RATE_LIMIT_REDIS_FAILURE: 'fallback',
  };
  let redis: ChildProcess | undefined;
  let server: MainProcess;
  let key: string;

  beforeAll(async () => {
    redis = await startRedisServer(PORT);
    key = createKey(env);
    server = await startMain(env);
  }, 60_000);
  afterAll(async () => {
    await server?.kill();
    await killProcess(redis);
    rmSync(dir, { recursive: true, force: true });
  });

  const served = async () =>
    (await fetch(`${server.url}/v1/pets`, { headers: { Authorization: `Bearer ${key}` } })).status === 200;
  /** Counter samples carry no labels here: the line is `name value`. */
  const fallbacks = async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    return Number(/^animal_store_rate_limit_store_fallbacks_total (\d+)/m.exec(text)?.[1] ?? 0);
  };

  const recoveries = () =>
    server.logs().filter((line) => line.msg === 'Redis reachable again: rate limiting shared through Redis').length;

  it('two outages of 30 requests each count 2', async () => {
    expect(await served()).toBe(true);
    for (let outage = 1; outage <= 2; outage++) {
      // Shared through Redis again (its probe got through) before the next outage starts.
      for (let i = 0; i < 200 && recoveries() < outage - 1; i++) {
        await served();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(recoveries()).toBe(outage - 1);
      await killProcess(redis);
      redis = undefined;
      for (let i = 0; i < 30; i++) expect(await served()).toBe(true);
      expect(await fallbacks()).toBe(outage);
      redis = await startRedisServer(PORT);
    }
  });
});
