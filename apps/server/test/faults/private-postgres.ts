import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ephemeralPortRange } from '@animal-store/test-services';
import pg from 'pg';

/**
 * A PostgreSQL cluster of the fault suite's own (initdb in a temporary folder, loopback only, trust auth), so tests
 * can stop and start it without touching the machine's shared server. PostgreSQL refuses to run as root: when the
 * tests run as root, the cluster belongs to the `postgres` user.
 */
export interface PrivatePostgres {
  readonly url: string;
  readonly port: number;
  start(): Promise<void>;
  /** Fast shutdown (connections are terminated), as an outage would. */
  stop(): Promise<void>;
  /** Stops the server if running and removes its folder. */
  destroy(): Promise<void>;
}

const BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

export function postgresAvailable(): boolean {
  return existsSync(join(BIN, 'initdb')) && existsSync(join(BIN, 'postgres'));
}

/** Run as the `postgres` user when we are root (uid and gid looked up once), as ourselves otherwise. */
function owner(): { uid: number; gid: number } | Record<string, never> {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

export async function createPrivatePostgres(port: number): Promise<PrivatePostgres> {
  // A fixed port in the ephemeral range may be held by any outgoing connection while the server is stopped, and the
  // restart then fails (see ephemeralPortRange).
  const [low, high] = ephemeralPortRange();
  if (port >= low && port <= high)
    throw new Error(`port ${port} is in the machine's ephemeral range ${low}-${high}: reserve one below ${low}`);
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-faults-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const as = owner();
  if ('uid' in as) chownSync(dir, as.uid, as.gid);
  execFileSync(
    join(BIN, 'initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'],
    { stdio: 'ignore', ...as },
  );
  let child: ChildProcess | undefined;
  const url = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  // The server's own log, so a start that fails says why (a port taken, a stale lock) instead of timing out.
  const log = join(dir, 'postgres.log');
  const logTail = () => {
    try {
      return readFileSync(log, 'utf8').trim().split('\n').slice(-5).join('\n');
    } catch {
      return '(no log)';
    }
  };

  const ready = async (started: ChildProcess, deadline: number) => {
    for (;;) {
      if (started.exitCode !== null || started.signalCode !== null)
        throw new Error(
          `private PostgreSQL on ${port} exited (${started.exitCode ?? started.signalCode}):\n${logTail()}`,
        );
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
      try {
        await client.connect();
        await client.query('SELECT 1');
        await client.end();
        return;
      } catch (err) {
        await client.end().catch(() => undefined);
        if (Date.now() > deadline)
          throw new Error(`private PostgreSQL on ${port} did not start: ${(err as Error).message}\n${logTail()}`, {
            cause: err,
          });
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  };

  const pg_ = {
    url,
    port,
    async start() {
      if (child) return;
      const args = [
        '-D',
        data,
        '-p',
        String(port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        `unix_socket_directories=${dir}`,
        '-c',
        'fsync=off',
        '-c',
        'max_connections=40',
        '-c',
        'shared_buffers=16MB',
      ];
      const out = openSync(log, 'a', 0o666);
      const started = spawn(join(BIN, 'postgres'), args, { stdio: ['ignore', out, out], ...as });
      closeSync(out);
      child = started;
      started.once('exit', () => {
        if (child === started) child = undefined;
      });
      await ready(started, Date.now() + 20_000);
    },
    async stop() {
      const running = child;
      if (!running) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      // SIGINT is PostgreSQL's "fast" shutdown: every connection terminated, as in an outage.
      running.kill('SIGINT');
      const timer = setTimeout(() => running.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      child = undefined;
    },
    async destroy() {
      await pg_.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return pg_;
}

/**
 * A private cluster, started, with an empty `animal_store` database, and the environment of a server on it: pool waits
 * fail after a second (an outage is answered, not waited out), and the log is at `info` (the suite reads it).
 */
export async function startPrivateDatabase(
  port: number,
): Promise<{ postgres: PrivatePostgres; env: Record<string, string> }> {
  const postgres = await createPrivatePostgres(port);
  await postgres.start();
  const admin = new pg.Client({ connectionString: postgres.url });
  await admin.connect();
  await admin.query('CREATE DATABASE animal_store');
  await admin.end();
  const env = {
    DATABASE_URL: postgres.url.replace(/\/postgres$/, '/animal_store'),
    DATABASE_POOL_TIMEOUT_MS: '1000',
    LOG_LEVEL: 'info',
  };
  return { postgres, env };
}
