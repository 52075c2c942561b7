/**
 * Starts the real built server (`@animal-store/server`, a devDependency) as a child process on a temporary SQLite file,
 * and issues an API key with its key CLI. Black box: nothing of the server is imported.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { closedPort } from './peer.js';

const SERVER_DIR = fileURLToPath(new URL('../../node_modules/@animal-store/server/', import.meta.url));
const MAIN = join(SERVER_DIR, 'dist/main.js');
const KEYS_CLI = join(SERVER_DIR, 'dist/cli/keys.js');

export interface RealServer {
  origin: string;
  /** `<origin>/v1` */
  baseUrl: string;
  /** A fresh key of the free plan. */
  apiKey: string;
  /** Issues another key. */
  createKey(plan?: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startRealServer(
  options: { startTimeoutMs?: number; adminToken?: string } = {},
): Promise<RealServer> {
  for (const file of [MAIN, KEYS_CLI]) {
    if (!existsSync(file))
      throw new Error(`${file} is missing: run \`pnpm --filter @animal-store/server build\` first`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-client-'));
  const env = {
    ...process.env,
    DATABASE_URL: `file:${join(dir, 'test.db')}`,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    ...(options.adminToken ? { ADMIN_TOKEN: options.adminToken } : {}),
  };
  const port = await closedPort();
  const origin = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(process.execPath, [MAIN], {
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await waitForHealth(origin, child, options.startTimeoutMs ?? 30_000, () => output);
    const createKey = async (plan = 'free') => {
      const { stdout } = await promisify(execFile)(process.execPath, [KEYS_CLI, 'create', '--plan', plan], {
        env,
        timeout: 30_000,
      });
      const key = stdout.trim().split('\n').at(-1)?.trim();
      if (!key) throw new Error('the key CLI printed no key');
      return key;
    };
    return { origin, baseUrl: `${origin}/v1`, apiKey: await createKey(), createKey, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function waitForHealth(
  origin: string,
  child: ChildProcess,
  timeoutMs: number,
  output: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}:\n${output()}`);
    try {
      const response = await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(1000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the server did not answer GET /healthz within ${timeoutMs} ms:\n${output()}`);
}
