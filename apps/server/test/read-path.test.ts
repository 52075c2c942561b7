/**
 * The hot read path added for speed: list and get answered by prepared SQL (not Prisma), the key cache answered without
 * a promise, and the Link header built without URLSearchParams. Each must answer exactly what the general path does.
 */
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/database.js';
import { prismaPetStore } from '../src/db/prisma-stores.js';
import type { Database, PetStore } from '../src/db/types.js';
import { nextLink } from '../src/http/paging.js';
import { memoOf } from '../src/shared-page.js';
import { createApiKey, KEY_LOOKUP_NEEDED, KeyResolver } from '../src/keys.js';
import { createTestDatabase, eventually, prismaClientFor, PROVIDERS, type TestDatabase } from './helpers.js';

describe.each(PROVIDERS)('prepared reads on %s', (provider) => {
  let target: TestDatabase;
  let db: Database;
  // The general path the prepared reads stand in for: the same stores on Prisma alone.
  let prisma: ReturnType<typeof prismaClientFor>;
  let general: PetStore;
  const created: Array<{ id: number; name: string; categoryId: number; status?: string }> = [];

  beforeAll(async () => {
    target = await createTestDatabase(provider);
    db = await openDatabase(target.target);
    prisma = prismaClientFor(target.target);
    general = prismaPetStore(prisma);
    const statuses = ['available', 'pending', 'sold', undefined] as const;
    for (let i = 0; i < 12; i++) {
      const status = statuses[i % 4];
      created.push(await db.pets.create({ name: `p${i}`, categoryId: i === 5 ? 9007199254740991 : i + 1, ...(status ? { status } : {}) }));
    }
  });
  afterAll(async () => {
    await prisma.$disconnect();
    await db.close();
    await target.drop();
  });

  it('list agrees with the catalogue for every filter, cursor and limit', async () => {
    for (const status of [undefined, 'available', 'pending', 'sold'] as const) {
      for (const afterId of [undefined, created[0]!.id, created[6]!.id, created[11]!.id]) {
        for (const limit of [1, 3, 100]) {
          const expected = created.filter((p) => (status === undefined || p.status === status) && (afterId === undefined || p.id > afterId)).slice(0, limit);
          expect(await db.pets.list({ limit, status, afterId })).toEqual(expected);
          expect(await general.list({ limit, status, afterId })).toEqual(expected);
        }
      }
    }
  });

  it('get answers the pet, int64 values exactly, and undefined for a missing id', async () => {
    expect(await db.pets.get(created[5]!.id)).toEqual(created[5]);
    expect((await db.pets.get(created[5]!.id))?.categoryId).toBe(9007199254740991);
    expect(await db.pets.get(created[3]!.id)).not.toHaveProperty('status');
    expect(await db.pets.get(9007199254740991)).toBeUndefined();
    for (const pet of created) expect(await general.get(pet.id)).toEqual(await db.pets.get(pet.id));
  });

  it('refuses (never rounds) an id beyond 2^53-1 written by someone else', async () => {
    const sql = 'INSERT INTO "Pet" (id, name, "categoryId", status) VALUES (9007199254740993, \'big\', 1, \'sold\')';
    if (target.target.provider === 'sqlite') {
      const raw = new BetterSqlite3(target.target.file);
      raw.exec(sql);
      raw.close();
    } else {
      const client = new pg.Client({ connectionString: target.target.url });
      await client.connect();
      await client.query(sql);
      await client.end();
    }
    await expect(db.pets.list({ limit: 100, status: 'sold' })).rejects.toThrow(/beyond 2\^53-1/);
    await expect(general.list({ limit: 100, status: 'sold' })).rejects.toThrow(/beyond 2\^53-1/);
    // Pages that stop before it are unaffected.
    expect(await db.pets.list({ limit: 1, status: 'sold' })).toEqual([created[2]]);
  });
});

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
    for (let i = 0; i < 6; i++) await db.pets.create({ name: `c${i}`, categoryId: 1, status: i % 2 ? 'sold' : 'available' });
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
    expect((await db.pets.list({ limit: 100, status: 'sold' })).map((p) => p.name)).toEqual(cachedSold.map((p) => p.name));
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

describe('PostgreSQL read coalescing', () => {
  let target: TestDatabase;
  const opened: Database[] = [];
  const open = async (coalesceReads: boolean) => {
    const db = await openDatabase(target.target, { poolSize: 2, coalesceReads });
    opened.push(db);
    return db;
  };
  beforeAll(async () => {
    target = await createTestDatabase('postgresql');
  });
  afterAll(async () => {
    for (const db of opened) await db.close();
    await target.drop();
  });

  it('identical reads waiting for a connection share one query; different reads do not', async () => {
    const db = await open(true);
    await db.pets.create({ name: 'shared', categoryId: 1, status: 'sold' });
    const same = await Promise.all(Array.from({ length: 20 }, () => db.pets.list({ limit: 5 })));
    expect(new Set(same).size).toBe(1); // one answer object: one query
    expect(Object.isFrozen(same[0]) && same[0]!.every((pet) => Object.isFrozen(pet))).toBe(true);
    expect(memoOf(same[0])).toBeDefined(); // a shared page: its JSON is worked out once for all 20
    const [all, sold, get] = await Promise.all([db.pets.list({ limit: 5 }), db.pets.list({ limit: 5, status: 'sold' }), db.pets.get(same[0]![0]!.id)]);
    expect(all).not.toBe(same[0]); // a new batch: the first one was sent
    expect(sold).toEqual(all);
    expect(get).toEqual(all[0]);
    const off = await open(false);
    const apart = await Promise.all(Array.from({ length: 5 }, () => off.pets.list({ limit: 5 })));
    expect(new Set(apart).size).toBe(5);
  });

  it('identical reads of requests handled in the same turn of the event loop share one query, even with connections free', async () => {
    const db = await open(true);
    await Promise.all([db.pets.list({ limit: 5 }), db.pets.list({ limit: 5, status: 'sold' })]); // connections warm and idle
    // Each read from its own callback of one turn, as requests arriving on different sockets are.
    const reads = await new Promise<Array<Promise<readonly unknown[]>>>((resolve) => {
      const out: Array<Promise<readonly unknown[]>> = [];
      for (let i = 0; i < 5; i++) {
        setImmediate(() => {
          out.push(db.pets.list({ limit: 5 }));
          if (out.length === 5) resolve(out);
        });
      }
    });
    expect(new Set(await Promise.all(reads)).size).toBe(1);
    // The next turn's read is a query of its own, sent after those answered.
    expect(await db.pets.list({ limit: 5 })).not.toBe((await Promise.all(reads))[0]);
  });

  it('keeps at most readConcurrency read queries in flight; the others wait their turn', async () => {
    const url = target.target.provider === 'postgresql' ? target.target.url : '';
    const limited = await openDatabase(target.target, { readConcurrency: 2 });
    const unlimited = await openDatabase(target.target, { coalesceReads: false });
    opened.push(limited, unlimited);
    const locker = new pg.Client({ connectionString: url });
    const observer = new pg.Client({ connectionString: url });
    await locker.connect();
    await observer.connect();
    try {
      const blocked = async () =>
        Number(
          (await observer.query<{ n: string }>(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`))
            .rows[0]!.n,
        );
      for (const [db, expected] of [
        [limited, 2],
        [unlimited, 5],
      ] as const) {
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE "Pet" IN ACCESS EXCLUSIVE MODE');
        const reads = [1, 2, 3, 4, 5].map((limit) => db.pets.list({ limit })); // five different pages
        await eventually(async () => (await blocked()) === expected);
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(await blocked()).toBe(expected); // no more were sent
        await locker.query('COMMIT');
        const pages = await Promise.all(reads);
        expect(pages.map((page) => page.length)).toEqual([1, 2, 3, 4, 5].map((n) => Math.min(n, pages[4]!.length)));
      }
    } finally {
      await locker.end();
      await observer.end();
    }
  });

  it('a read that starts after a commit sees it, while identical reads are in flight all along', async () => {
    const db = await open(true);
    const busy: Promise<unknown>[] = [];
    for (let i = 0; i < 40; i++) {
      // Keep batches of the same page in flight around the write and the read that follows it.
      for (let j = 0; j < 4; j++) busy.push(db.pets.list({ limit: 100, status: 'pending' }));
      const created = await db.pets.create({ name: `fresh-${i}`, categoryId: 1, status: 'pending' });
      for (let j = 0; j < 4; j++) busy.push(db.pets.list({ limit: 100, status: 'pending' }));
      const page = await db.pets.list({ limit: 100, status: 'pending' });
      expect(page.map((pet) => pet.id)).toContain(created.id);
    }
    await Promise.all(busy);
  });
});

describe('KeyResolver.peek', () => {
  let target: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    target = await createTestDatabase('sqlite');
    db = await openDatabase(target.target);
  });
  afterAll(async () => {
    await db.close();
    await target.drop();
  });

  it('answers what resolve answers, from the cache only, and asks for a lookup otherwise', async () => {
    let now = 1_000_000;
    const resolver = new KeyResolver(db.apiKeys, 5000, () => now);
    const { raw, record } = await createApiKey(db.apiKeys, { plan: 'free' });
    expect(resolver.peek('nope')).toBeUndefined();
    expect(resolver.peek(raw)).toBe(KEY_LOOKUP_NEEDED);
    expect((await resolver.resolve(raw))?.id).toBe(record.id);
    expect(resolver.peek(raw)).toMatchObject({ id: record.id });
    await db.apiKeys.revoke({ id: record.id }, new Date());
    now += 4999;
    expect(resolver.peek(raw)).toMatchObject({ id: record.id }); // still cached, as resolve
    now += 2;
    expect(resolver.peek(raw)).toBe(KEY_LOOKUP_NEEDED);
    expect(await resolver.resolve(raw)).toBeUndefined();
    expect(resolver.peek(raw)).toBeUndefined(); // the revoked answer is cached too
    const unknown = 'ask_' + 'x'.repeat(43);
    expect(await resolver.resolve(unknown)).toBeUndefined();
    expect(resolver.peek(unknown)).toBeUndefined();
  });
});

describe('nextLink', () => {
  const general = (path: string, p: { limit: number; status?: string; cursor: string }) => {
    const q = new URLSearchParams({ limit: String(p.limit) });
    if (p.status !== undefined) q.set('status', p.status);
    q.set('cursor', p.cursor);
    return `<${path}?${q.toString()}>; rel="next"`;
  };
  it.each([
    { limit: 20, cursor: 'cDEuMjA' },
    { limit: 100, status: 'sold', cursor: 'cDEuOTAwNzE5OTI1NDc0MDk5MQ' },
  ])('writes what URLSearchParams writes for a real page %o', (p) => {
    expect(nextLink('/v1/pets', p)).toBe(general('/v1/pets', p));
  });
  it.each([
    { limit: 1, status: 'a b&c=d', cursor: 'x_y-z' },
    { limit: 5, cursor: 'a+b/c=' },
  ])('keeps any other value intact through the URL %o', (p) => {
    const link = nextLink('/v1/pets', p);
    const url = new URL(/^<([^>]+)>; rel="next"$/.exec(link)![1]!, 'http://host');
    expect(url.pathname).toBe('/v1/pets');
    expect(Object.fromEntries(url.searchParams)).toEqual({ limit: String(p.limit), ...(p.status ? { status: p.status } : {}), cursor: p.cursor });
  });
});
