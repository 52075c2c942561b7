import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startMain, type MainProcess } from './main-process.js';

/** The built server says at start how many CPUs it may use, and warns with fewer than two (lifecycle/cpus.ts). */
describe('usable CPUs at start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-cpus-'));
  const env = { DATABASE_URL: `file:${join(dir, 'db.sqlite')}` };
  const servers: MainProcess[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.kill()));
    rmSync(dir, { recursive: true, force: true });
  });
  const start = async (launcher: string[] = []) => {
    const server = await startMain(env, launcher);
    servers.push(server);
    const listening = server.logs().find((l) => String(l.msg).startsWith('listening on'));
    return { listening, warning: server.logs().find((l) => l.level === 40 /* pino's warn */ && 'recommended' in l) };
  };

  it('warns when its affinity allows one CPU (taskset -c 0)', async () => {
    execFileSync('taskset', ['--version']);
    const { listening, warning } = await start(['taskset', '-c', '0']);
    expect(listening?.cpus).toBe(1);
    expect(warning).toMatchObject({ cpus: 1, recommended: 2 });
    expect(String(warning?.msg)).toMatch(/^1 CPU usable: .*give the replica 2 CPUs/);
  });

  it.runIf(availableParallelism() >= 2)('says nothing more with two or more', async () => {
    const { listening, warning } = await start();
    expect(listening?.cpus).toBe(availableParallelism());
    expect(warning).toBeUndefined();
  });
});
