import { Redis } from 'ioredis';
import type { Cluster, RedisOptions } from 'ioredis';
import type { RateLimitStore, StoreRequest, StoreResult } from './types.js';

/**
 * The whole decision in one script (one round trip).
 *
 * KEYS[1..n]  one hash per window: { s = window start (ms), c = count }
 * KEYS[n+1]   ban: string holding the ban end (ms)
 * KEYS[n+2]   refusal counter: hash { s = refusal-window start, c = refusals }
 * ARGV[1]     n (number of windows)
 * ARGV[2]     injected time in ms (tests only) or "" to use Redis TIME
 * ARGV[3]     max refusals before a ban, or "-1" to disable bans
 * ARGV[4]     refusal-counting window (ms)
 * ARGV[5]     ban duration (ms)
 * ARGV[6..]   limit_i, windowMs_i for each window
 *
 * Returns { outcome (0 allowed, 1 refused, 2 banned), now, banUntil, banStarted, count_1..count_n }.
 * Every decision compares stored window starts / ban end with `now`, so expiry is
 * only garbage collection (PEXPIRE to the end of the window, computed from the same `now`).
 */
export const RATE_LIMIT_LUA = `
if redis.replicate_commands then redis.replicate_commands() end -- effects replication (no-op on Redis >= 5)
local n = tonumber(ARGV[1])
local now
if ARGV[2] ~= '' then
  now = tonumber(ARGV[2])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local maxRefusals = tonumber(ARGV[3])
local banWindow = tonumber(ARGV[4])
local banDuration = tonumber(ARGV[5])

local counts = {}
local starts = {}
local fresh = {}
local fits = true
for i = 1, n do
  local limit = tonumber(ARGV[4 + 2 * i])
  local w = tonumber(ARGV[5 + 2 * i])
  local start = now - (now % w)
  local h = redis.call('HMGET', KEYS[i], 's', 'c')
  local c = 0
  if h[1] and tonumber(h[1]) == start then
    c = tonumber(h[2]) or 0
  else
    fresh[i] = true
  end
  counts[i] = c
  starts[i] = start
  if c + 1 > limit then fits = false end
end

local function reply(outcome, banUntil, started)
  local r = { outcome, string.format('%.0f', now), string.format('%.0f', banUntil), started }
  for i = 1, n do r[4 + i] = counts[i] end
  return r
end

local banUntil = tonumber(redis.call('GET', KEYS[n + 1]) or '0') or 0
if banUntil > now then return reply(2, banUntil, 0) end

if fits then
  for i = 1, n do
    local w = tonumber(ARGV[5 + 2 * i])
    local ttl = string.format('%.0f', starts[i] + w - now)
    if fresh[i] then
      redis.call('HSET', KEYS[i], 's', string.format('%.0f', starts[i]), 'c', 1)
      redis.call('PEXPIRE', KEYS[i], ttl)
      counts[i] = 1
    else
      counts[i] = redis.call('HINCRBY', KEYS[i], 'c', 1)
    end
  end
  return reply(0, 0, 0)
end

if maxRefusals < 0 then return reply(1, 0, 0) end

local rKey = KEYS[n + 2]
local rStart = now - (now % banWindow)
local rh = redis.call('HMGET', rKey, 's', 'c')
local refusals = 1
if rh[1] and tonumber(rh[1]) == rStart then refusals = (tonumber(rh[2]) or 0) + 1 end
if refusals > maxRefusals then
  banUntil = now + banDuration
  redis.call('SET', KEYS[n + 1], string.format('%.0f', banUntil), 'PX', banDuration)
  redis.call('DEL', rKey)
  return reply(2, banUntil, 1)
end
redis.call('HSET', rKey, 's', string.format('%.0f', rStart), 'c', refusals)
redis.call('PEXPIRE', rKey, string.format('%.0f', rStart + banWindow - now))
return reply(1, 0, 0)
`;

const COMMAND = 'animalStoreRateLimit';

type ScriptReply = [number, string, string, number, ...number[]];
type ClientWithScript = (Redis | Cluster) & {
  [COMMAND](numKeys: number, ...args: (string | number)[]): Promise<ScriptReply>;
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
}

/** The Redis store; see {@link createRedisStore}. */
export interface RedisStore extends RateLimitStore {
  readonly name: 'redis';
  readonly prefix: string;
  /** The keys a request for `identity` with these window lengths touches (for tests/ops). */
  keysFor(identity: string, windowLengthsMs: readonly number[]): string[];
}

/**
 * Creates the Redis store. Every `consume` is exactly one `EVALSHA` of
 * {@link RATE_LIMIT_LUA} (ioredis `defineCommand` retries with `EVAL` on `NOSCRIPT`),
 * timed by Redis `TIME`, so all app instances agree whatever their clocks.
 */
export function createRedisStore(options: RedisStoreOptions): RedisStore {
  const client = options.client as ClientWithScript;
  const prefix = options.prefix ?? 'rl:';
  const clock = options.now;
  if (typeof client[COMMAND] !== 'function') {
    client.defineCommand(COMMAND, { lua: RATE_LIMIT_LUA });
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
    async consume(request: StoreRequest): Promise<StoreResult> {
      const { windows, ban } = request;
      const n = windows.length;
      const tag = `{${prefix}${request.key}}`;
      const args: (string | number)[] = [];
      for (let i = 0; i < n; i++) args.push(`${tag}:w:${windows[i]!.windowMs}`);
      args.push(`${tag}:ban`, `${tag}:rf`);
      args.push(
        n,
        clock === undefined ? '' : Math.floor(clock()),
        ban === null ? -1 : ban.maxRefusals,
        ban === null ? 60_000 : ban.windowMs,
        ban === null ? 1 : ban.durationMs,
      );
      for (let i = 0; i < n; i++) args.push(windows[i]!.limit, windows[i]!.windowMs);

      const reply = await client[COMMAND](n + 2, ...args);
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
    },
  };
}

/** Options of {@link createRedisClient}. */
export interface RedisClientOptions {
  /** `redis://` URL (default `process.env.REDIS_URL` or `redis://127.0.0.1:6379`). */
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
    // No auto-pipelining (off by default in ioredis): it builds a Pipeline per event-loop turn, and each Pipeline carries a
    // per-instance accessor whose closure kept the turn's commands and callbacks alive through V8's minor GCs until the
    // next full one. At 1,000 req/s that was a Pipeline per request and scavenges of 3-5 ms (BENCHMARKS.md, change 10);
    // at saturation it bought nothing measurable over the socket's own coalescing of queued writes.
    maxRetriesPerRequest: 0,
    autoResubscribe: false,
    retryStrategy: (attempt: number) => Math.min(50 * 2 ** Math.min(attempt, 10), maxDelay),
    ...options.redisOptions,
  });
  client.on('error', options.onError ?? (() => undefined));
  return client;
}
