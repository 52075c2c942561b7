import { Redis } from 'ioredis';
import type { Cluster, RedisOptions } from 'ioredis';
import { turnWriteCoalescer } from './fast-path/turn-writes.js';
import { RATE_LIMIT_LUA } from './lua-scripts/rate-limit.js';
import { REFUND_LUA } from './lua-scripts/refund.js';
import type { RateLimitStore, RefundRequest, StoreRequest, StoreResult } from './types.js';

const COMMAND = 'animalStoreRateLimit';
const REFUND = 'animalStoreRateLimitRefund';

type ScriptReply = [number, string, string, number, ...number[]];
type ClientWithScript = (Redis | Cluster) & {
  [COMMAND](numKeys: number, ...args: (string | number)[]): Promise<ScriptReply>;
  [REFUND](numKeys: number, ...args: (string | number)[]): Promise<number>;
};

/** Options of {@link createRedisStore}. */
export interface RedisStoreOptions {
  /** An ioredis client (`Redis` or `Cluster`); see {@link createRedisClient}. */
  readonly client: Redis | Cluster;
  /**
   * Key prefix (default `"rl:"`). Keys look like `{<prefix><identity>}:w:60000`,
   * `{<prefix><identity>}:ban`, `{<prefix><identity>}:rf`; the braces are the Redis
   * Cluster hash tag, so all keys of one identity live in one slot.
   */
  readonly prefix?: string;
  /**
   * TESTS ONLY: injected clock (ms). Its value is passed to the script as an
   * argument instead of using Redis `TIME`. Leave unset in production.
   */
  readonly now?: () => number;
  /**
   * Decisions of one turn of the event loop go to Redis in one socket write (default true; single-node clients only):
   * see {@link createRedisStore}.
   */
  readonly coalesceWrites?: boolean;
}

/** The Redis store; see {@link createRedisStore}. */
export interface RedisStore extends RateLimitStore {
  readonly name: 'redis';
  readonly prefix: string;
  /** The keys a request for `identity` with these window lengths touches (for tests/ops). */
  keysFor(identity: string, windowLengthsMs: readonly number[]): string[];
  /** Deletes every key of `identity` (counters of any window, ban, refusals), on every master of a cluster. */
  resetKey(identity: string): Promise<void>;
  /** Closes the client given in the options (the store owns it from then on). */
  close(): Promise<void>;
}

/**
 * Creates the Redis store. Every `consume` is exactly one `EVALSHA` of
 * {@link RATE_LIMIT_LUA} (ioredis `defineCommand` retries with `EVAL` on `NOSCRIPT`),
 * timed by Redis `TIME`, so all app instances agree whatever their clocks.
 *
 * With `coalesceWrites` (a single-node client), the decisions asked for in one turn of
 * the event loop leave in ONE socket write (see fast-path/turn-writes.ts).
 */
export function createRedisStore(options: RedisStoreOptions): RedisStore {
  const client = options.client as ClientWithScript;
  const coalesce = options.coalesceWrites !== false && !('nodes' in client && typeof client.nodes === 'function');
  const coalesceThisTurn = coalesce ? turnWriteCoalescer(client as Redis) : undefined;
  const prefix = options.prefix ?? 'rl:';
  const clock = options.now;
  if (typeof client[COMMAND] !== 'function') {
    client.defineCommand(COMMAND, { lua: RATE_LIMIT_LUA });
  }
  if (typeof client[REFUND] !== 'function') {
    client.defineCommand(REFUND, { lua: REFUND_LUA });
  }

  const keysFor = (identity: string, lengths: readonly number[]): string[] => {
    const tag = `{${prefix}${identity}}`;
    const keys = lengths.map((ms) => `${tag}:w:${ms}`);
    keys.push(`${tag}:ban`, `${tag}:rf`);
    return keys;
  };

  return {
    name: 'redis',
    prefix,
    keysFor,
    resetKey: (identity: string) => deleteIdentity(client, `{${prefix}${identity}}`),
    async close() {
      client.disconnect();
    },
    async refund(request: RefundRequest) {
      const tag = `{${prefix}${request.key}}`;
      const keys = request.windows.map((w) => `${tag}:w:${w.windowMs}`);
      await client[REFUND](keys.length, ...keys, Math.floor(request.at), ...request.windows.map((w) => w.windowMs));
    },
    async consume(request: StoreRequest): Promise<StoreResult> {
      const n = request.windows.length;
      const args = scriptArguments(
        `{${prefix}${request.key}}`,
        request,
        clock === undefined ? '' : Math.floor(clock()),
      );
      coalesceThisTurn?.();
      return storeResult(await client[COMMAND](n + 2, ...args), n);
    },
  };
}

/** {@link RATE_LIMIT_LUA}'s KEYS then ARGV for one request: see the script for their order. */
function scriptArguments(tag: string, request: StoreRequest, now: number | ''): (string | number)[] {
  const { windows, ban } = request;
  const n = windows.length;
  const args: (string | number)[] = [];
  for (let i = 0; i < n; i++) args.push(`${tag}:w:${windows[i]!.windowMs}`);
  args.push(`${tag}:ban`, `${tag}:rf`);
  args.push(
    n,
    now,
    ban === null ? -1 : ban.maxRefusals,
    ban === null ? 60_000 : ban.windowMs,
    ban === null ? 1 : ban.durationMs,
  );
  for (let i = 0; i < n; i++) args.push(windows[i]!.limit, windows[i]!.windowMs);
  return args;
}

/** The script's reply, `{ outcome, now, banUntil, banStarted, count_1..count_n }`, as a store result. */
function storeResult(reply: ScriptReply, n: number): StoreResult {
  const outcome = reply[0] === 0 ? 'allowed' : reply[0] === 1 ? 'refused' : 'banned';
  const counts = new Array<number>(n);
  for (let i = 0; i < n; i++) counts[i] = Number(reply[4 + i]);
  return {
    outcome,
    now: Number(reply[1]),
    counts,
    banUntil: outcome === 'banned' ? Number(reply[2]) : null,
    banStarted: reply[3] === 1,
    source: 'redis',
  };
}

/**
 * Deletes every key under an identity's hash tag. They share it, so they live on one node; each master is SCANned for
 * them (an admin action, rare): the window lengths an identity was charged under are not known here.
 */
async function deleteIdentity(client: Redis | Cluster, tag: string): Promise<void> {
  const pattern = `${globEscape(tag)}:*`;
  const nodes = 'nodes' in client && typeof client.nodes === 'function' ? client.nodes('master') : [client as Redis];
  await Promise.all(nodes.map((node) => deleteMatching(node, pattern)));
}

/** Options of {@link createRedisClient}. */
export interface RedisClientOptions {
  /** `redis://` URL (default `redis://127.0.0.1:6379`). */
  readonly url?: string;
  /** Per-command timeout in ms (default 100). */
  readonly commandTimeout?: number;
  /** Connect timeout in ms (default 1 000). */
  readonly connectTimeout?: number;
  /** Upper bound of the reconnect back-off in ms (default 1 000). */
  readonly maxReconnectDelayMs?: number;
  /** Receives connection errors (ioredis `error` events). Default: ignore (the store reports failures). */
  readonly onError?: (err: Error) => void;
  /** Extra ioredis options, applied last. */
  readonly redisOptions?: RedisOptions;
}

/**
 * Builds an ioredis client suited to rate limiting: commands fail fast instead
 * of queueing while disconnected (`enableOfflineQueue: false`,
 * `maxRetriesPerRequest: 0`, `commandTimeout` 100 ms), and the connection is
 * re-established automatically with a capped back-off. Wait for its `ready`
 * event (or let the first requests fall back) before relying on it.
 */
export function createRedisClient(options: RedisClientOptions = {}): Redis {
  const url = options.url ?? 'redis://127.0.0.1:6379';
  const maxDelay = options.maxReconnectDelayMs ?? 1_000;
  const client = new Redis(url, {
    commandTimeout: options.commandTimeout ?? 100,
    connectTimeout: options.connectTimeout ?? 1_000,
    enableOfflineQueue: false,
    // No auto-pipelining (off by default in ioredis): its Pipeline per event-loop turn kept commands alive through minor
    // GCs, and bought nothing over the socket's own write coalescing (fast-path/turn-writes.ts).
    maxRetriesPerRequest: 0,
    autoResubscribe: false,
    retryStrategy: (attempt: number) => Math.min(50 * 2 ** Math.min(attempt, 10), maxDelay),
    ...options.redisOptions,
  });
  client.on('error', options.onError ?? (() => undefined));
  return client;
}

/** A Redis glob pattern matching `text` literally. */
const globEscape = (text: string) => text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);

async function deleteMatching(node: Redis, pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    if (keys.length > 0) await node.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}
