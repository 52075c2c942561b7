import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, databaseConfig, eventually, type TestDatabase } from '../../../test/helpers.js';
import { memoOf } from '../../fast-path/serialized-body.js';
import { openDatabase } from '../database.js';
import { petsOf, type PetPage } from '../pets/page.js';
import type { Database } from '../types.js';

describe('PostgreSQL reads of pages asked for together', () => {
  let target: TestDatabase;
  const opened: Database[] = [];
  const open = async (coalesceReads: boolean) => {
    const db = await openDatabase(databaseConfig(target.target, { databaseLimits: { poolSize: 2 }, coalesceReads }));
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

  it('identical pages asked for together share one answer; without coalescing each has its own query', async () => {
    const db = await open(true);
    await db.pets.create({ name: 'shared', categoryId: 1, status: 'sold' });
    const same = await Promise.all(Array.from({ length: 20 }, () => db.pets.list({ limit: 5 })));
    expect(new Set(same).size).toBe(1); // one answer object: one query
    expect(Object.isFrozen(same[0])).toBe(true);
    expect(memoOf(same[0])?.entity.body).toBe(same[0]!.json); // answered as its JSON, its ETag worked out once for all 20
    const [shared] = petsOf(same[0]!);
    expect(shared).toMatchObject({ name: 'shared', categoryId: 1, status: 'sold' });
    const [all, sold, get] = await Promise.all([
      db.pets.list({ limit: 5 }),
      db.pets.list({ limit: 5, status: 'sold' }),
      db.pets.get(shared!.id),
    ]);
    expect(all).not.toBe(same[0]); // a new batch: the first one was sent
    expect(sold).toEqual(all);
    expect(get).toEqual(shared);
    const off = await open(false);
    const apart = await Promise.all(Array.from({ length: 5 }, () => off.pets.list({ limit: 5 })));
    expect(new Set(apart).size).toBe(5);
  });

  it('gets go in the query of the pages asked for with them; identical ones share an answer', async () => {
    const db = await open(true);
    const made = await db.pets.create({ name: 'got', categoryId: 2, status: 'pending' });
    const before = db.readStats?.().coalescing?.queries ?? 0;
    const [pages, gets, missing] = await Promise.all([
      Promise.all([db.pets.list({ limit: 2 }), db.pets.list({ limit: 3, status: 'pending' })]),
      Promise.all(Array.from({ length: 5 }, () => db.pets.get(made.id))),
      db.pets.get(made.id + 1_000_000),
    ]);
    expect(db.readStats?.().coalescing?.queries).toBe(before + 1);
    for (const got of gets) expect(got).toEqual(made);
    expect(missing).toBeUndefined();
    expect(petsOf(pages[1]).at(-1)).toEqual(made);
  });

  it('identical reads of requests handled in the same turn of the event loop share one query, even with connections free', async () => {
    const db = await open(true);
    await Promise.all([db.pets.list({ limit: 5 }), db.pets.list({ limit: 5, status: 'sold' })]); // connections warm and idle
    // Each read from its own callback of one turn, as requests arriving on different sockets are.
    const reads = await new Promise<Array<Promise<unknown>>>((resolve) => {
      const out: Array<Promise<unknown>> = [];
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

  it('keeps at most readConcurrency queries in flight; the pages that wait go in one query', async () => {
    const url = target.target.provider === 'postgresql' ? target.target.url : '';
    // Reads wait on the lock as long as the test holds it: no lock timeout, no limit on the wait for a read slot.
    const patient = { lockTimeoutMs: 0, poolTimeoutMs: 60_000 };
    const limited = await openDatabase(databaseConfig(target.target, { readConcurrency: 2, databaseLimits: patient }));
    const unlimited = await openDatabase(
      databaseConfig(target.target, { coalesceReads: false, databaseLimits: patient }),
    );
    opened.push(limited, unlimited);
    const locker = new pg.Client({ connectionString: url });
    const observer = new pg.Client({ connectionString: url });
    await locker.connect();
    await observer.connect();
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
    try {
      const blocked = async () =>
        Number(
          (
            await observer.query<{ n: string }>(
              `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
            )
          ).rows[0]!.n,
        );
      for (const [db, expected] of [
        [limited, 2],
        [unlimited, 5],
      ] as const) {
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE "Pet" IN ACCESS EXCLUSIVE MODE');
        const before = db.readStats?.().coalescing?.queries ?? 0;
        const reads: Array<Promise<PetPage>> = [];
        for (const limit of [1, 2, 3, 4, 5]) {
          reads.push(db.pets.list({ limit })); // five different pages, each in a turn of its own
          await nextTurn();
        }
        await eventually(async () => (await blocked()) === expected);
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(await blocked()).toBe(expected); // no more were sent
        await locker.query('COMMIT');
        const pages = (await Promise.all(reads)).map(petsOf);
        expect(pages.map((page) => page.length)).toEqual([1, 2, 3, 4, 5].map((n) => Math.min(n, pages[4]!.length)));
        // With two in flight, the three pages that waited were read by one query.
        if (db === limited) expect(db.readStats?.().coalescing?.queries).toBe(before + 3);
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
      expect(petsOf(page).map((pet) => pet.id)).toContain(created.id);
    }
    await Promise.all(busy);
  });
});
