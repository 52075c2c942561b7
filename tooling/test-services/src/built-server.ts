/**
 * Starts the built server (apps/server's dist/main.js, from the folder given) as a child process on a temporary SQLite
 * file, and issues API keys with its key CLI (dist/cli/keys.js). Black box: nothing of the server is imported, so the
 * client's tests and the registry test use it as any app would.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, startChildService } from './child-service.js';

export interface BuiltServerOptions {
  /** The server package's folder (holding dist/main.js and dist/cli/keys.js). */
  serverDir: string;
  startTimeoutMs?: number;
  /** Serves the admin API with this token. */
  adminToken?: string;
  /** The Node binary that runs the server and its key CLI. Default: this process's. */
  node?: string;
  /** More of the server's environment (REDIS_URL, OTEL_*...). */
  env?: Record<string, string>;
}

export interface BuiltServer {
  origin: string;
  /** `<origin>/v1` */
  baseUrl: string;
  /** A fresh key of the free plan. */
  apiKey: string;
  /** Issues another key (`flags`: more of the key CLI's, e.g. an enterprise key's `--per-minute 100000`). */
  createKey(plan?: string, flags?: string[]): Promise<string>;
  stop(): Promise<void>;
}

export async function startBuiltServer(options: BuiltServerOptions): Promise<BuiltServer> {
  const main = join(options.serverDir, 'dist/main.js');
  const keysCli = join(options.serverDir, 'dist/cli/keys.js');
  const node = options.node ?? process.execPath;
  for (const file of [main, keysCli]) {
    if (!existsSync(file))
      throw new Error(`${file} is missing: run \`pnpm --filter @animal-store/server build\` first`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-server-'));
  const env = {
    ...process.env,
    DATABASE_URL: `file:${join(dir, 'test.db')}`,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    ...(options.adminToken ? { ADMIN_TOKEN: options.adminToken } : {}),
    ...options.env,
  };
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const service = startChildService('the server', node, [main], { ...env, PORT: String(port) });
  const stop = async () => {
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await service.waitForHttp(`${origin}/healthz`, options.startTimeoutMs ?? 30_000);
    const createKey = async (plan = 'free', flags: string[] = []) => {
      const args = [keysCli, 'create', '--plan', plan, ...flags];
      const { stdout } = await promisify(execFile)(node, args, { env, timeout: 30_000 });
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
