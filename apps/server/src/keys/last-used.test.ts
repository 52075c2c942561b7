import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDatabaseUrl } from '../config.js';
import { openDatabase } from '../db/database.js';
import type { Database } from '../db/types.js';
import { createApiKey } from './admin.js';
import { LastUsedRecorder } from './last-used.js';

describe('LastUsedRecorder', () => {
  let dir: string;
  let db: Database;
  const writes: { at: Date; ids: readonly number[] }[] = [];
  const store = {
    recordLastUsed: (at: Date, ids: readonly number[]) => {
      writes.push({ at, ids: [...ids] });
      return db.apiKeys.recordLastUsed(at, ids);
    },
  };
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'last-used-'));
    db = await openDatabase(parseDatabaseUrl(`file:${join(dir, 'k.db')}`));
  });
  afterAll(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes each key once per minute, in one statement per minute, to the minute', async () => {
    let now = Date.UTC(2030, 0, 1, 10, 0, 12, 345);
    const recorder = new LastUsedRecorder(store, { intervalMs: 60_000, now: () => now });
    const a = (await createApiKey(db.apiKeys, { plan: 'free' })).record;
    const b = (await createApiKey(db.apiKeys, { plan: 'free' })).record;
    writes.length = 0;
    for (let i = 0; i < 100; i++) recorder.record(a.id);
    recorder.record(b.id);
    await recorder.flush();
    expect(writes).toEqual([{ at: new Date(Date.UTC(2030, 0, 1, 10, 0)), ids: [a.id, b.id] }]);
    expect((await db.apiKeys.findById(a.id))?.lastUsedAt).toEqual(new Date(Date.UTC(2030, 0, 1, 10, 0)));

    // Same minute again: nothing to write.
    recorder.record(a.id);
    await recorder.flush();
    expect(writes).toHaveLength(1);

    now += 60_000;
    recorder.record(b.id);
    await recorder.close();
    expect(writes).toHaveLength(2);
    expect((await db.apiKeys.findById(b.id))?.lastUsedAt).toEqual(new Date(Date.UTC(2030, 0, 1, 10, 1)));
    expect((await db.apiKeys.findById(a.id))?.lastUsedAt).toEqual(new Date(Date.UTC(2030, 0, 1, 10, 0)));
  });

  it('never moves a last use backwards (replicas flush in any order)', async () => {
    const key = (await createApiKey(db.apiKeys, { plan: 'free' })).record;
    await db.apiKeys.recordLastUsed(new Date(Date.UTC(2030, 0, 1, 10, 5)), [key.id]);
    await db.apiKeys.recordLastUsed(new Date(Date.UTC(2030, 0, 1, 10, 4)), [key.id]);
    expect((await db.apiKeys.findById(key.id))?.lastUsedAt).toEqual(new Date(Date.UTC(2030, 0, 1, 10, 5)));
  });
});
