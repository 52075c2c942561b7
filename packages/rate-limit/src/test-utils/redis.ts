// Test helpers, exported as `@animal-store/rate-limit/testing` for the tests of packages that use Redis.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { freePort, restartablePort } from '@animal-store/test-services';
import type { Cluster, Redis } from 'ioredis';
import { createRedisClient, type RedisClientOptions } from '../redis-store.js';

export const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** A unique key prefix per test file/run. */
export function testPrefix(): string {
  return `rltest:${randomBytes(6).toString('hex')}:`;
}

/** Resolves when the client is ready; rejects (fails the test) if Redis is unreachable. */
export async function waitReady(client: Redis, timeoutMs = 5_000): Promise<void> {
  if (client.status === 'ready') return;
  const timeout = new Promise<never>((_, reject) => {
    const t = setTimeout(
      () => reject(new Error(`Redis not ready after ${timeoutMs} ms (status ${client.status})`)),
      timeoutMs,
    );
    t.unref();
  });
  await Promise.race([once(client, 'ready'), timeout]);
}

/** A connected client (with a generous command timeout, to keep tests robust under load). */
export async function connect(options: RedisClientOptions = {}): Promise<Redis> {
  const client = createRedisClient({ url: REDIS_URL, commandTimeout: 2_000, ...options });
  try {
    await waitReady(client);
  } catch (err) {
    client.disconnect();
    throw new Error(`Redis is required at ${REDIS_URL}: ${(err as Error).message}`, { cause: err });
  }
  return client;
}

/** Deletes every key of a prefix (keys start with `{<prefix>`). */
export async function deletePrefix(client: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `{${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) deleted += await client.del(...keys);
  } while (cursor !== '0');
  return deleted;
}

/** Deletes every key of a prefix on every master of a Redis Cluster (one key per command: keys of other slots). */
export async function deleteClusterPrefix(cluster: Cluster, prefix: string): Promise<number> {
  let deleted = 0;
  for (const node of cluster.nodes('master')) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `{${prefix}*`, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) deleted += await node.del(key);
    } while (cursor !== '0');
  }
  return deleted;
}

/** A free TCP port on 127.0.0.1 (the workspace's test services have the one helper). */
export { freePort };

/** Starts `redis-server` on `port` (no persistence) and waits until it accepts connections. */
export async function startRedisServer(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const onData = (chunk: Buffer): void => {
    output += chunk.toString();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const deadline = Date.now() + 10_000;
  while (!output.includes('Ready to accept connections')) {
    if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}): ${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`redis-server did not start on ${port}: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  child.stdout?.off('data', onData);
  child.stderr?.off('data', onData);
  child.stdout?.resume();
  child.stderr?.resume();
  return child;
}

/** Kills a child (SIGKILL) and waits for it to exit. */
export async function killProcess(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

/** A redis-server of a test's own on a free port, stopped and started again to play an outage. */
export interface PrivateRedis {
  readonly port: number;
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  /** Starts it again on the same port (nothing while it runs). */
  start(): Promise<void>;
  /** Kills it (SIGKILL) and waits for its exit (nothing while it is stopped). */
  stop(): Promise<void>;
}

/** Starts a {@link PrivateRedis}; `stop()` it after the tests. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  // Started again on the same port: one below the ephemeral range, which no outgoing connection can be holding.
  const port = await restartablePort();
  let child = await startRedisServer(port);
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      if (child.exitCode !== null || child.signalCode !== null) child = await startRedisServer(port);
    },
    stop: () => killProcess(child),
  };
}
