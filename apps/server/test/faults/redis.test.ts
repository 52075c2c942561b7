import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killProcess, startRedisServer } from '@animal-store/rate-limit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectDependency503, noStacks } from './expectations.js';
import { createKey, startMain, type MainProcess } from '../main-process.js';

// Ports reserved for #13's private Redis: 6391-6399.
const PORT = 6391;

describe('Redis stopped and restarted (a private redis-server)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-faults-redis-'));
  const base = { DATABASE_URL: `file:${join(dir, 'db.sqlite')}`, REDIS_URL: `redis://127.0.0.1:${PORT}` };
  let redis: ChildProcess | undefined;
  let refuse: MainProcess;
  let fallback: MainProcess;
  let key: string;

  beforeAll(async () => {
    redis = await startRedisServer(PORT);
    key = createKey(base);
    refuse = await startMain({ ...base, RATE_LIMIT_REDIS_FAILURE: 'refuse' });
    fallback = await startMain({ ...base, RATE_LIMIT_REDIS_FAILURE: 'fallback' });
  }, 60_000);
  afterAll(async () => {
    await refuse?.kill();
    await fallback?.kill();
    await killProcess(redis);
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuse mode answers 503 with Retry-After while Redis is down; fallback mode keeps serving; both recover', async () => {
    const headers = { Authorization: `Bearer ${key}` };
    expect((await fetch(`${refuse.url}/v1/pets`, { headers })).status).toBe(200);
    expect((await fetch(`${fallback.url}/v1/pets`, { headers })).status).toBe(200);
    await killProcess(redis);
    redis = undefined;
    for (let i = 0; i < 10; i++) {
      await expectDependency503(await fetch(`${refuse.url}/v1/pets`, { headers }), { rateLimitHeaders: false });
      expect((await fetch(`${fallback.url}/v1/pets`, { headers })).status).toBe(200);
    }
    redis = await startRedisServer(PORT);
    let back = false;
    for (let i = 0; i < 200 && !back; i++) {
      const res = await fetch(`${refuse.url}/v1/pets`, { headers });
      back = res.status === 200;
      if (!back) {
        await expectDependency503(res, { rateLimitHeaders: false });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    expect(back).toBe(true);
    expect((await fetch(`${fallback.url}/v1/pets`, { headers })).status).toBe(200);
    noStacks(refuse);
    noStacks(fallback);
  });
});
