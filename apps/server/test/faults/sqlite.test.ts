import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { expectDependency503, killDuringCreates, metricValue, noStacks } from './expectations.js';
import { createKey, startMain, useMain, type MainProcess } from '../main-process.js';
import { mountSmallTmpfs } from './tmpfs.js';

const tmpfs = mountSmallTmpfs(2048);
if ('skip' in tmpfs) console.warn(`SKIPPED: SQLite on a full filesystem: ${tmpfs.skip}`);

/** Fills the filesystem of `dir` with one file until the kernel says ENOSPC; returns its path. */
function fill(dir: string): string {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(4096, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  expect(statfsSync(dir).bavail).toBe(0);
  return path;
}

describe.skipIf('skip' in tmpfs)('SQLite on a small filesystem that fills up', () => {
  const dir = 'dir' in tmpfs ? tmpfs.dir : '';
  const file = join(dir, 'animal-store.db');
  const env = { DATABASE_URL: `file:${file}`, LOG_LEVEL: 'info' };
  const ctx = useMain(env, () => {
    if ('unmount' in tmpfs) tmpfs.unmount();
  });

  it('answers creates 503 while the disk is full, keeps serving reads, and writes again once space is freed', async () => {
    const { key, server } = ctx;
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const create = (name: string) =>
      fetch(`${server.url}/v1/pets`, { method: 'POST', headers, body: JSON.stringify({ name, categoryId: 1 }) });
    const acknowledged: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await create(`Before ${i}`);
      expect(res.status).toBe(201);
      acknowledged.push(((await res.json()) as { id: number }).id);
    }
    const filler = fill(dir);
    let refused = 0;
    for (let i = 0; i < 400 && refused < 5; i++) {
      const res = await create(`${'x'.repeat(250)} ${i}`);
      if (res.status === 201) acknowledged.push(((await res.json()) as { id: number }).id);
      else {
        await expectDependency503(res);
        refused++;
      }
    }
    expect(refused).toBe(5);
    const list = await fetch(`${server.url}/v1/pets?limit=5`, { headers });
    expect(list.status).toBe(200);
    rmSync(filler);
    const after = await create('After');
    expect(after.status).toBe(201);
    acknowledged.push(((await after.json()) as { id: number }).id);
    for (const id of acknowledged) {
      expect((await fetch(`${server.url}/v1/pets/${id}`, { headers })).status, `pet ${id}`).toBe(200);
    }
    expect(await metricValue(server.url, 'animal_store_dependency_failures_total', 'reason="disk_full"')).toBe(5);
    noStacks(server);
    await server.kill();
    const db = new BetterSqlite3(file, { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      db.close();
    }
  });
});

describe('SQLite killed during creates', () => {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-faults-kill-'));
  const env = { DATABASE_URL: `file:${join(dir, 'db.sqlite')}` };
  let server: MainProcess | undefined;
  afterAll(async () => {
    await server?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every acknowledged create across a SIGKILL of the server', async () => {
    const key = createKey(env);
    const result = await killDuringCreates(await startMain(env), () => startMain(env), key);
    server = result.server;
    expect(result.acknowledged).toBeGreaterThanOrEqual(40);
  });
});
