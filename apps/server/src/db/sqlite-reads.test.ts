import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/helpers.js';
import { memoOf } from '../shared-page.js';
import { openDatabase } from './database.js';
import type { Database } from './types.js';

describe('SQLite list page cache', () => {
  let target: TestDatabase;
  const opened: Database[] = [];
  const open = async (pageCacheEntries: number) => {
    const db = await openDatabase(target.target, { pageCacheEntries });
    opened.push(db);
    return db;
  };
  beforeAll(async () => {
    target = await createTestDatabase('sqlite');
    const db = await open(0);
    for (let i = 0; i < 6; i++)
      await db.pets.create({ name: `c${i}`, categoryId: 1, status: i % 2 ? 'sold' : 'available' });
  });
  afterAll(async () => {
    for (const db of opened) await db.close();
    await target.drop();
  });
  const otherConnection = (sql: string) => {
    const raw = new BetterSqlite3(target.target.provider === 'sqlite' ? target.target.file : '');
    raw.exec(sql);
    raw.close();
  };

  it('answers a page again while nothing changed, frozen, and reads again after any commit', async () => {
    const db = await open(8);
    const first = await db.pets.list({ limit: 3 });
    expect(await db.pets.list({ limit: 3 })).toBe(first);
    expect(Object.isFrozen(first) && first.every((pet) => Object.isFrozen(pet))).toBe(true);
    expect(memoOf(first)).toBeDefined(); // a shared page: its JSON is worked out once

    // A commit through this process's own writer (Prisma's connection).
    const created = await db.pets.create({ name: 'fresh', categoryId: 2 });
    const afterCreate = await db.pets.list({ limit: 100 });
    expect(afterCreate.at(-1)).toEqual(created);

    // A commit through another connection (another process, the key CLI): the next answer shows it.
    const cachedSold = await db.pets.list({ limit: 100, status: 'sold' });
    expect(await db.pets.list({ limit: 100, status: 'sold' })).toBe(cachedSold);
    otherConnection(`UPDATE "Pet" SET status = 'sold' WHERE name = 'c0'`);
    const sold = await db.pets.list({ limit: 100, status: 'sold' });
    expect(sold).not.toBe(cachedSold);
    expect(sold.map((p) => p.name)).toEqual(['c0', ...cachedSold.map((p) => p.name)]);
    otherConnection(`DELETE FROM "Pet" WHERE name = 'c0'`);
    expect((await db.pets.list({ limit: 100, status: 'sold' })).map((p) => p.name)).toEqual(
      cachedSold.map((p) => p.name),
    );
    // A commit to another table empties the cache too (the check is per database, not per table).
    const page = await db.pets.list({ limit: 2 });
    otherConnection(`INSERT INTO "ApiKey" (prefix, hash, plan) VALUES ('ask_x', 'h', 'free')`);
    const again = await db.pets.list({ limit: 2 });
    expect(again).not.toBe(page);
    expect(again).toEqual(page);
  });

  it('keeps at most pageCacheEntries pages, evicting the least recently used', async () => {
    const db = await open(2);
    const a = await db.pets.list({ limit: 1 });
    const b = await db.pets.list({ limit: 2 });
    expect(await db.pets.list({ limit: 1 })).toBe(a); // a is now the most recently used
    await db.pets.list({ limit: 3 }); // evicts b
    expect(await db.pets.list({ limit: 1 })).toBe(a);
    const b2 = await db.pets.list({ limit: 2 });
    expect(b2).not.toBe(b);
    expect(b2).toEqual(b);
  });

  it('is off with pageCacheEntries 0: every answer is read', async () => {
    const db = await open(0);
    const first = await db.pets.list({ limit: 3 });
    const second = await db.pets.list({ limit: 3 });
    expect(second).not.toBe(first);
    expect(second).toEqual(first);
  });
});
