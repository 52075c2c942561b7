import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, databaseConfig, type TestDatabase } from '../../../test/helpers.js';
import { memoOf } from '../../fast-path/serialized-body.js';
import { createApiKey } from '../../keys/admin.js';
import { openDatabase } from '../database.js';
import { petsOf, type PetPage } from '../pets/page.js';
import type { Database } from '../types.js';
import { PetJsonCache } from './pet-json-cache.js';
import { SQLITE_LIST_SQL } from './sql.js';

describe('SQLite list page cache', () => {
  let target: TestDatabase;
  const opened: Database[] = [];
  const open = async (pageCacheEntries: number, petCacheEntries?: number) => {
    const db = await openDatabase(
      databaseConfig(target.target, {
        pageCacheEntries,
        ...(petCacheEntries !== undefined ? { petCacheEntries } : {}),
      }),
    );
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
  /** A page asked for a second time is kept (the first asking is only remembered: see page-cache.ts). */
  const kept = async (db: Database, options: Parameters<Database['pets']['list']>[0]) => {
    await db.pets.list(options);
    return db.pets.list(options);
  };
  const otherConnection = (sql: string) => {
    const raw = new BetterSqlite3(target.target.provider === 'sqlite' ? target.target.file : '');
    raw.exec(sql);
    raw.close();
  };

  it('answers a page again while nothing changed, frozen, and reads again after any commit', async () => {
    const db = await open(8);
    const first = await kept(db, { limit: 3 });
    expect(await db.pets.list({ limit: 3 })).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(memoOf(first)?.entity.body).toBe(first.json); // answered as its JSON, whose ETag is worked out once

    // A commit through this process's own writer (Prisma's connection).
    const created = await db.pets.create({ name: 'fresh', categoryId: 2 });
    const afterCreate = petsOf(await db.pets.list({ limit: 100 }));
    expect(afterCreate.at(-1)).toEqual(created);

    // A commit through another connection (another process, the key CLI): the next answer shows it.
    const cachedSold = await kept(db, { limit: 100, status: 'sold' });
    expect(await db.pets.list({ limit: 100, status: 'sold' })).toBe(cachedSold);
    otherConnection(`UPDATE "Pet" SET status = 'sold' WHERE name = 'c0'`);
    const sold = await db.pets.list({ limit: 100, status: 'sold' });
    expect(sold).not.toBe(cachedSold);
    const names = (page: PetPage) => petsOf(page).map((p) => p.name);
    expect(names(sold)).toEqual(['c0', ...names(cachedSold)]);
    otherConnection(`DELETE FROM "Pet" WHERE name = 'c0'`);
    expect(names(await db.pets.list({ limit: 100, status: 'sold' }))).toEqual(names(cachedSold));
    // A commit to another table empties the cache too (the check is per database, not per table).
    const page = await kept(db, { limit: 2 });
    expect(await db.pets.list({ limit: 2 })).toBe(page);
    otherConnection(`INSERT INTO "ApiKey" (prefix, hash, plan) VALUES ('ask_x', 'h', 'free')`);
    const again = await db.pets.list({ limit: 2 });
    expect(again).not.toBe(page);
    expect(again).toEqual(page);
  });

  it("keeps its pages across the keys' last-use writes, which go through the reads' own connection", async () => {
    const db = await open(8);
    const key = (await createApiKey(db.apiKeys, { plan: 'free' })).record; // through Prisma's connection
    const page = await kept(db, { limit: 2 });
    const minute = new Date(Date.UTC(2030, 0, 3, 4, 5));
    await db.apiKeys.recordLastUsed(minute, [key.id]);
    await db.apiKeys.recordLastDeprecatedCall(minute, [key.id]);
    expect(await db.pets.list({ limit: 2 })).toBe(page);
    const stored = await db.apiKeys.findById(key.id); // read back through Prisma: the same DateTime
    expect([stored?.lastUsedAt, stored?.lastDeprecatedCallAt]).toEqual([minute, minute]);
    await db.apiKeys.recordLastUsed(new Date(minute.getTime() - 60_000), [key.id]);
    expect((await db.apiKeys.findById(key.id))?.lastUsedAt).toEqual(minute);
  });

  it("keeps, after this process's own create, exactly the pages the new pet cannot enter", async () => {
    const db = await open(16);
    const all = petsOf(await db.pets.list({ limit: 1000 }));
    const full = await kept(db, { limit: 2 }); // full: a new pet sorts after its last row
    const fullAfter = await kept(db, { limit: 2, afterId: all[1]!.id });
    const openSold = await kept(db, { limit: 1000, status: 'sold' }); // not full, other status
    const openAvailable = await kept(db, { limit: 1000, status: 'available' }); // not full, same status
    const openAll = await kept(db, { limit: 1000 });
    const pastEnd = await kept(db, { limit: 1000, afterId: 9_000_000 }); // not full, after the new id

    const created = await db.pets.create({ name: 'appended', categoryId: 3, status: 'available' });
    expect(await db.pets.list({ limit: 2 })).toBe(full);
    expect(await db.pets.list({ limit: 2, afterId: all[1]!.id })).toBe(fullAfter);
    expect(await db.pets.list({ limit: 1000, status: 'sold' })).toBe(openSold);
    expect(await db.pets.list({ limit: 1000, afterId: 9_000_000 })).toBe(pastEnd);
    // The pages it may enter are read again, and show it.
    const available = await db.pets.list({ limit: 1000, status: 'available' });
    expect(available).not.toBe(openAvailable);
    expect(petsOf(available).at(-1)).toEqual(created);
    expect(petsOf(await db.pets.list({ limit: 1000 })).at(-1)).toEqual(created);
    expect(await db.pets.list({ limit: 1000 })).not.toBe(openAll);

    // Idempotent creates (their records commit with them) drop pages the same way.
    const scope = { lineageId: 1, key: 'page-cache', fingerprint: 'f', locationPrefix: '/v1/pets/' };
    const once = await db.pets.createOnce({ name: 'once', categoryId: 3, status: 'sold' }, scope);
    expect(once.kind).toBe('created');
    expect(petsOf(await db.pets.list({ limit: 1000, status: 'sold' })).at(-1)?.name).toBe('once');
    expect(await db.pets.list({ limit: 2 })).toBe(full);

    // A create by another connection (another process, or here another Database on the same file) is unknown in
    // detail: every page is read again, the full ones too.
    const other = await open(0);
    await other.pets.create({ name: 'elsewhere', categoryId: 3, status: 'pending' });
    const fullAgain = await db.pets.list({ limit: 2 });
    expect(fullAgain).not.toBe(full);
    expect(fullAgain).toEqual(full);
    expect(petsOf(await db.pets.list({ limit: 1000 })).at(-1)?.name).toBe('elsewhere');
  });

  it('never answers a page older than a commit by another connection that changed a full page', async () => {
    const db = await open(16);
    const full = petsOf(await db.pets.list({ limit: 2 }));
    // Not an append: another connection renames a row inside the full page.
    otherConnection(`UPDATE "Pet" SET name = 'renamed' WHERE id = ${full[0]!.id}`);
    expect(petsOf(await db.pets.list({ limit: 2 }))[0]?.name).toBe('renamed');
    otherConnection(`UPDATE "Pet" SET name = '${full[0]!.name}' WHERE id = ${full[0]!.id}`);
  });

  it('reads a status after a cursor through the (status, id) index, never a scan of the id range', () => {
    const raw = new BetterSqlite3(target.target.provider === 'sqlite' ? target.target.file : '');
    try {
      raw.exec('ANALYZE'); // statistics like a long-lived database's: they made the planner take the id range
      const plan = raw
        .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${SQLITE_LIST_SQL.byStatusAfter}`)
        .all('sold', 1, 101)
        .map((row) => row.detail);
      expect(plan).toEqual(['SEARCH Pet USING INDEX Pet_status_id_idx (status=? AND id>?)']);
    } finally {
      raw.close();
    }
  });

  it('keeps at most pageCacheEntries pages, evicting the least recently used', async () => {
    const db = await open(2);
    const a = await kept(db, { limit: 1 });
    const b = await kept(db, { limit: 2 });
    expect(await db.pets.list({ limit: 1 })).toBe(a); // a is now the most recently used
    await kept(db, { limit: 3 }); // evicts b
    expect(await db.pets.list({ limit: 1 })).toBe(a);
    const b2 = await db.pets.list({ limit: 2 });
    expect(b2).not.toBe(b);
    expect(b2).toEqual(b);
  });

  it('keeps a page only when it is asked for again: pages asked for once are never stored', async () => {
    const db = await open(4);
    const once = await db.pets.list({ limit: 4 });
    const twice = await db.pets.list({ limit: 4 });
    expect(twice).not.toBe(once); // the first asking was only remembered
    expect(twice).toEqual(once);
    expect(await db.pets.list({ limit: 4 })).toBe(twice);
    // Many pages asked for once each do not evict a page that is asked for again and again.
    for (let limit = 10; limit < 30; limit++) await db.pets.list({ limit });
    expect(await db.pets.list({ limit: 4 })).toBe(twice);
    expect(db.readStats?.().pageCache).toEqual({ hits: 2, misses: 22 });
  });

  it('is off with pageCacheEntries 0: every answer is read', async () => {
    const db = await open(0);
    const first = await db.pets.list({ limit: 3 });
    const second = await db.pets.list({ limit: 3 });
    expect(second).not.toBe(first);
    expect(second).toEqual(first);
  });

  it("answers pages from each pet's JSON kept in memory, the same bytes as from the rows, and after a commit elsewhere reads them again", async () => {
    const kept = await open(0); // no page cache: every answer is made again, from the pets' JSON once they are known
    const rows = await open(0, 0); // nothing kept: every answer from its rows
    const pages = [
      { limit: 2 },
      { limit: 100 },
      { limit: 3, status: 'sold' as const },
      { limit: 1, afterId: 2 },
      { limit: 2, status: 'available' as const, afterId: 1 },
      { limit: 5, status: 'pending' as const },
    ];
    for (let round = 0; round < 2; round++) {
      for (const options of pages) {
        const [a, b] = [await kept.pets.list(options), await rows.pets.list(options)];
        expect({ ...a }).toEqual({ ...b }); // json, lastId and more
        expect(a.lastId).toBe(petsOf(a).at(-1)?.id);
      }
    }
    const first = petsOf(await kept.pets.list({ limit: 2 }))[0]!;
    expect((await kept.pets.list({ limit: 2 })).more).toBe(true);
    // A pet changed by another connection (by hand: the service never changes a pet) is never answered as it was.
    otherConnection(`UPDATE "Pet" SET name = 'edited' WHERE id = ${first.id}`);
    expect(petsOf(await kept.pets.list({ limit: 2 }))[0]?.name).toBe('edited');
    otherConnection(`UPDATE "Pet" SET name = '${first.name}' WHERE id = ${first.id}`);
    expect(petsOf(await kept.pets.list({ limit: 2 }))[0]).toEqual(first);
    // This process's own creates are known in full: their JSON is kept as they commit.
    const created = await kept.pets.create({ name: 'quo"ted\\name', categoryId: 4, status: 'pending' });
    const pending = await kept.pets.list({ limit: 100, status: 'pending' });
    expect(pending.json).toBe((await rows.pets.list({ limit: 100, status: 'pending' })).json);
    expect(petsOf(pending).at(-1)).toEqual(created);
  });
});

describe('PetJsonCache', () => {
  it('keeps pets that keep being used while many new ones pass through, and holds at most its size', () => {
    const cache = new PetJsonCache(10);
    for (let id = 1; id <= 3; id++) cache.set(id, `pet ${id}`);
    for (let id = 100; id < 200; id++) {
      cache.set(id, `new ${id}`); // pets created in bulk, never shown
      for (let shown = 1; shown <= 3; shown++) expect(cache.get(shown)).toBe(`pet ${shown}`);
    }
    const held = Array.from({ length: 300 }, (_, id) => cache.get(id)).filter((json) => json !== undefined);
    expect(held.length).toBeLessThanOrEqual(10);
    expect(cache.get(100)).toBeUndefined(); // aged out
    expect(cache.get(199)).toBe('new 199');
    cache.clear();
    expect(cache.get(1)).toBeUndefined();
    const none = new PetJsonCache(0);
    none.set(1, 'x');
    expect(none.get(1)).toBeUndefined();
  });
});
