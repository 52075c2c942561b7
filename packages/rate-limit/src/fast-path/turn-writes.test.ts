import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_BAN } from '../test-utils/ban.js';
import { createLimiter } from '../limiter.js';
import { createRedisStore } from '../redis-store.js';
import { connect, deletePrefix, testPrefix } from '../test-utils/redis.js';
import { minuteAndDay } from '../windows.js';

const prefix = testPrefix();
const FREE = minuteAndDay({ perMinute: 60, perDay: 1000 });

async function redisTimeMs(client: Redis): Promise<number> {
  const [s, us] = await client.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

afterAll(async () => {
  const client = await connect();
  await deletePrefix(client, prefix);
  client.disconnect();
});

describe('turnWriteCoalescer through the Redis store (canary)', () => {
  it('sends the decisions of one turn of the event loop in one socket write, each with its own answer', async () => {
    for (const coalesceWrites of [true, false]) {
      const client = await connect();
      try {
        const at = await redisTimeMs(client);
        const store = createRedisStore({ client, prefix, now: () => at, coalesceWrites });
        const limiter = createLimiter({ store, ban: TEST_BAN });
        await limiter.consume(`turn-${coalesceWrites}-warm`, FREE); // script loaded
        // Count the system calls the socket makes: one per write, or one writev for everything corked.
        type Sink = (...args: unknown[]) => void;
        const stream = client.stream as unknown as { _write: Sink; _writev: Sink };
        const counted = { write: 0, writev: 0 };
        const write = stream._write.bind(stream);
        const writev = stream._writev.bind(stream);
        stream._write = (...args: unknown[]) => (counted.write++, write(...args));
        stream._writev = (...args: unknown[]) => (counted.writev++, writev(...args));
        const identities = Array.from({ length: 20 }, (_, i) => `turn-${coalesceWrites}-${i % 4}`);
        const decisions = await Promise.all(identities.map((id) => limiter.consume(id, FREE)));
        // Five decisions per identity, counted one after the other: each command kept its own reply.
        for (let i = 0; i < 4; i++)
          expect(decisions.filter((_, j) => j % 4 === i).map((d) => d.windows[0]!.used)).toEqual([1, 2, 3, 4, 5]);
        if (coalesceWrites) expect(counted).toEqual({ write: 0, writev: 1 });
        else expect(counted.write).toBeGreaterThan(1); // a write each (those that find one in progress share a writev)
      } finally {
        client.disconnect();
      }
    }
  });
});
