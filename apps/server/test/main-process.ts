import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVER_ROOT } from '../src/config/server-root.js';

const MAIN = join(SERVER_ROOT, 'dist/main.js');
const KEYS = join(SERVER_ROOT, 'dist/cli/keys.js');

/** The built server (`dist/main.js`) as its own process, as production runs it, with its log lines collected. */
export interface MainProcess {
  readonly child: ChildProcess;
  readonly url: string;
  readonly port: number;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Parsed JSON log lines so far. */
  logs(): Record<string, unknown>[];
  readonly exited: Promise<number | null>;
  /** SIGKILL, then wait for the exit. */
  kill(): Promise<void>;
}

/** `launcher`: a command that runs node in its turn (e.g. `taskset -c 0`), as an operator may start it. */
export async function startMain(env: Record<string, string>, launcher: string[] = []): Promise<MainProcess> {
  const [command, ...args] = [...launcher, process.execPath, MAIN];
  const child = spawn(command, args, {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${output}`)), 30_000);
    const check = () => {
      const match = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        child.stdout.off('data', check);
        resolve(Number(match[1]));
      }
    };
    child.stdout.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening: ${output}`));
    });
  });
  return {
    child,
    port,
    url: `http://127.0.0.1:${port}`,
    output: () => output,
    logs: () =>
      output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

/**
 * Several servers started together; when one fails to start, those that did are killed before the error is thrown
 * (an afterAll never sees them, and they would outlive the test run).
 */
export async function startMains(envs: Record<string, string>[]): Promise<MainProcess[]> {
  const started = await Promise.allSettled(envs.map((env) => startMain(env)));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  const servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  if (!failed) return servers;
  await Promise.all(servers.map((server) => server.kill()));
  throw failed.reason;
}

/** Creates a key with the key CLI on the database `env` names; returns the raw key. */
export function createKey(env: Record<string, string>, plan = 'enterprise'): string {
  const args =
    plan === 'enterprise'
      ? ['create', '--plan', plan, '--per-minute', '100000', '--per-day', '10000000']
      : ['create', '--plan', plan];
  const created = spawnSync(process.execPath, [KEYS, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
  });
  if (created.status !== 0) throw new Error(`keys create failed: ${created.stderr}`);
  return created.stdout.trimEnd().split('\n').at(-1)!;
}

/**
 * For a describe block: a key and the built server on the database `env` names, started before its tests and killed
 * after them (then `cleanup`). Read `key` and `server` inside tests; a test may replace `server` (after a restart).
 */
export function useMain(env: Record<string, string>, cleanup: () => void): { key: string; server: MainProcess } {
  const context = {} as { key: string; server: MainProcess };
  beforeAll(async () => {
    context.key = createKey(env);
    context.server = await startMain(env);
  }, 60_000);
  afterAll(async () => {
    await context.server?.kill();
    cleanup();
  });
  return context;
}

/** {@link useMain} on a SQLite file in a temporary folder of its own (`animal-store-<name>-*`, removed after). */
export function useMainOnSqlite(name: string, env: Record<string, string>): { key: string; server: MainProcess } {
  const dir = mkdtempSync(join(tmpdir(), `animal-store-${name}-`));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  return useMain({ DATABASE_URL: `file:${join(dir, 'db.sqlite')}`, ...env }, remove);
}
