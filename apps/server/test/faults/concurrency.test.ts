// A replica SIGKILLed while it holds a key's concurrency slots (issue #25 §1): they come back when their leases expire.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as tcp } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, killProcess, startRedisServer } from '@animal-store/rate-limit/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONCURRENCY_PREFIX } from '../../src/rate-limiting/concurrency.js';
import { createKey, startMains, type MainProcess } from '../main-process.js';
import { noStacks } from './expectations.js';

describe('a replica killed while holding concurrency slots (a private redis-server)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-faults-concurrency-'));
  let redis: ChildProcess | undefined;
  let client: Redis;
  let env: Record<string, string>;
  let dying: MainProcess;
  let survivor: MainProcess;
  let key: string;

  beforeAll(async () => {
    const port = await freePort();
    redis = await startRedisServer(port);
    client = new Redis(port, '127.0.0.1');
    env = {
      DATABASE_URL: `file:${join(dir, 'db.sqlite')}`,
      REDIS_URL: `redis://127.0.0.1:${port}`,
      CONCURRENCY_LIMITS: 'shared',
      CONCURRENCY_LEASE_MS: '10000',
    };
    key = createKey(env, 'free');
    [dying, survivor] = (await startMains([env, env])) as [MainProcess, MainProcess];
  }, 60_000);
  afterAll(async () => {
    await dying?.kill();
    await survivor?.kill();
    client?.disconnect();
    await killProcess(redis);
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the slots of the dead replica until their leases expire, then the key has them all again', async () => {
    const leases = `{${CONCURRENCY_PREFIX}key:1}:leases`;
    // Five creates whose bodies never finish: each holds a slot on the replica about to die.
    const { port } = new URL(dying.url);
    for (let i = 0; i < 5; i++) {
      const socket = tcp(Number(port), '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write(
        `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
          'Content-Length: 40\r\n\r\n{"na',
      );
    }
    for (let i = 0; i < 400 && (await client.zcard(leases)) < 5; i++) await new Promise((r) => setTimeout(r, 25));
    expect(await client.zcard(leases)).toBe(5);
    await dying.kill();

    const headers = { Authorization: `Bearer ${key}` };
    const refused = await fetch(`${survivor.url}/v1/pets`, { headers });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { code: string }).code).toBe('concurrency_limit_exceeded');

    // The leases live CONCURRENCY_LEASE_MS; the set expires with the last one (polled in Redis, not by requests,
    // which the key's rate limit would refuse).
    for (let i = 0; i < 600 && (await client.exists(leases)) === 1; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await client.exists(leases)).toBe(0);
    expect((await fetch(`${survivor.url}/v1/pets`, { headers })).status).toBe(200);
    noStacks(survivor);
  });
});
