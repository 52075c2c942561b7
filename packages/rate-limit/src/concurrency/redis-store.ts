import type { Cluster, Redis } from 'ioredis';
import { turnWriteCoalescer } from '../fast-path/turn-writes.js';
import { CONCURRENCY_LUA } from '../lua-scripts/concurrency.js';
import type { ConcurrencyStore } from './types.js';

const COMMAND = 'animalStoreConcurrency';

type ClientWithScript = (Redis | Cluster) & {
  [COMMAND](key: string, ...args: (string | number)[]): Promise<[number, number]>;
};

/** Options of {@link createRedisConcurrencyStore}. */
export interface RedisConcurrencyStoreOptions {
  /** An ioredis client (`Redis` or `Cluster`), e.g. the rate limiter's; the store does not close it. */
  readonly client: Redis | Cluster;
  /** Key prefix (default `"cc:"`): an identity's leases are the sorted set `{<prefix><identity>}:leases`. */
  readonly prefix?: string;
  /** TESTS ONLY: injected clock (ms), passed to the script instead of Redis `TIME`. */
  readonly now?: () => number;
  /** The commands of one event-loop turn go in one socket write (default true; single-node clients only). */
  readonly coalesceWrites?: boolean;
}

/** The Redis concurrency store; see {@link createRedisConcurrencyStore}. */
export interface RedisConcurrencyStore extends ConcurrencyStore {
  readonly name: 'redis';
  /** The sorted set holding an identity's leases (tests, operations). */
  keyFor(identity: string): string;
}

/**
 * Leases shared by every replica: one sorted set per identity (member: lease, score: its expiry by Redis `TIME`), an
 * acquire is one `EVALSHA` of {@link CONCURRENCY_LUA} and a release one `ZREM`, those of one turn in one socket write
 * (fast-path/turn-writes.ts). A replica that dies holding leases
 * frees them when they expire. The braces are a Redis Cluster hash tag: one key, one slot.
 */
export function createRedisConcurrencyStore(options: RedisConcurrencyStoreOptions): RedisConcurrencyStore {
  const client = options.client as ClientWithScript;
  const prefix = options.prefix ?? 'cc:';
  const clock = options.now;
  if (typeof client[COMMAND] !== 'function') client.defineCommand(COMMAND, { lua: CONCURRENCY_LUA, numberOfKeys: 1 });
  const keyFor = (identity: string) => `{${prefix}${identity}}:leases`;
  const isCluster = 'nodes' in client && typeof client.nodes === 'function';
  const coalesce =
    options.coalesceWrites !== false && !isCluster ? turnWriteCoalescer(client as Redis) : () => undefined;
  return {
    name: 'redis',
    keyFor,
    async acquire(request) {
      const now = clock === undefined ? '' : Math.floor(clock());
      coalesce();
      const [acquired, inFlight] = await client[COMMAND](
        keyFor(request.key),
        request.limit,
        request.ttlMs,
        request.lease,
        now,
      );
      return { acquired: acquired === 1, inFlight: Number(inFlight), source: 'redis' };
    },
    async release(key, lease) {
      coalesce();
      await client.zrem(keyFor(key), lease);
    },
    async close() {
      // The client is shared (the rate limiter's): its owner closes it.
    },
  };
}
