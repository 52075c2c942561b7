// One behavioural suite for every concurrency store, with an injected clock (memory: `now` option; Redis and Redis
// Cluster: the time passed to the Lua script). Two limiters on one store play two replicas.
import { beforeEach, describe, expect, it } from 'vitest';
import { everyBackend } from '../test-utils/backends.js';
import { createConcurrencyLimiter, type ConcurrencyLimiter } from './limiter.js';
import { createMemoryConcurrencyStore } from './memory-store.js';
import { createRedisConcurrencyStore } from './redis-store.js';
import type { ConcurrencyStore } from './types.js';

const T0 = Date.UTC(2026, 4, 15, 12, 30, 0, 0);
const LEASE_MS = 30_000;
let clock = T0;
const harnesses = everyBackend<ConcurrencyStore>(
  createMemoryConcurrencyStore,
  createRedisConcurrencyStore,
  () => clock,
);

let seq = 0;
describe.each(harnesses)('$name (shared contract)', (h) => {
  let key: string;
  let store: ConcurrencyStore;
  /** Two limiters on one store: two replicas sharing it (each with its own lease names). */
  let replicas: [ConcurrencyLimiter, ConcurrencyLimiter];

  beforeEach(() => {
    clock = T0;
    key = `cc-${++seq}`;
    store = h.store();
    replicas = [
      createConcurrencyLimiter({ store, leaseMs: LEASE_MS }),
      createConcurrencyLimiter({ store, leaseMs: LEASE_MS }),
    ];
  });

  it('allows exactly limit requests in flight and refuses the next, counting both replicas', async () => {
    const [a, b] = replicas;
    const held = [await a.acquire(key, 3), await b.acquire(key, 3), await a.acquire(key, 3)];
    expect(held.map((d) => [d.allowed, d.inFlight])).toEqual([
      [true, 1],
      [true, 2],
      [true, 3],
    ]);
    const refused = await b.acquire(key, 3);
    expect(refused).toMatchObject({ allowed: false, inFlight: 3, limit: 3, key });
    refused.release(); // a refused decision holds nothing: releasing it frees no one's slot
    expect((await a.acquire(key, 3)).allowed).toBe(false);
  });

  it('gives a slot back on release, once, whoever releases twice', async () => {
    const [a, b] = replicas;
    const first = await a.acquire(key, 2);
    await b.acquire(key, 2);
    expect((await b.acquire(key, 2)).allowed).toBe(false);
    first.release();
    first.release();
    // A release is sent at once (not awaited): on Redis the next command for the key follows it on the same connection.
    const again = await b.acquire(key, 2);
    expect(again).toMatchObject({ allowed: true, inFlight: 2 });
    expect((await a.acquire(key, 2)).allowed).toBe(false);
  });

  it('keeps identities apart, and refuses everything at limit 0', async () => {
    const [a] = replicas;
    expect((await a.acquire(key, 1)).allowed).toBe(true);
    expect((await a.acquire(`${key}-other`, 1)).allowed).toBe(true);
    expect((await a.acquire(`${key}-zero`, 0)).allowed).toBe(false);
  });

  it('frees the slots of a replica that died (never released) when their leases expire', async () => {
    const [dead, alive] = replicas;
    for (let i = 0; i < 2; i++) expect((await dead.acquire(key, 2)).allowed).toBe(true);
    clock = T0 + LEASE_MS - 1;
    expect((await alive.acquire(key, 2)).allowed).toBe(false);
    clock = T0 + LEASE_MS;
    const after = await alive.acquire(key, 2);
    expect(after).toMatchObject({ allowed: true, inFlight: 1 });
  });

  it('a lease that outlived its life is gone: releasing it late frees no other slot', async () => {
    const [a, b] = replicas;
    const slow = await a.acquire(key, 1);
    clock = T0 + LEASE_MS;
    const next = await b.acquire(key, 1);
    expect(next.allowed).toBe(true);
    slow.release();
    expect((await b.acquire(key, 1)).allowed).toBe(false);
  });

  it('is exact under concurrent acquires from two replicas', async () => {
    const [a, b] = replicas;
    const decisions = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).acquire(key, 7)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(7);
    expect(Math.max(...decisions.map((d) => d.inFlight))).toBe(7);
  });

  it('refuses a limit that is not a whole number >= 0', async () => {
    const [a] = replicas;
    await expect(a.acquire(key, -1)).rejects.toThrow(RangeError);
    await expect(a.acquire(key, 1.5)).rejects.toThrow(RangeError);
  });
});
