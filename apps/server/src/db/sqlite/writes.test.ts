import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrateSqlite } from './migrate.js';
import { sqlitePetWrites } from './writes.js';

/**
 * SQLite group commit on a real file: one member the database refuses fails alone, the others of its batch commit, and
 * nothing of the refused one is left (never a pet without its idempotency record). The refusals come from triggers
 * added to this test's file only.
 */
describe('SQLite pet writes, one batch', () => {
  let dir: string;
  let db: BetterSqlite3.Database;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'animal-store-writes-'));
    db = new BetterSqlite3(join(dir, 'writes.db'));
    db.pragma('journal_mode = WAL');
    migrateSqlite(db);
    db.exec(`INSERT INTO "ApiKey" ("id", "name", "prefix", "hash", "plan") VALUES (1, 'k', 'p', 'h', 'free')`);
    db.exec(`CREATE TRIGGER refuse_pet BEFORE INSERT ON "Pet" WHEN NEW."name" = 'refused'
             BEGIN SELECT RAISE(ABORT, 'pet refused'); END`);
    db.exec(`CREATE TRIGGER refuse_record BEFORE INSERT ON "IdempotencyRecord" WHEN NEW."key" = 'refused'
             BEGIN SELECT RAISE(ABORT, 'record refused'); END`);
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const scope = (key: string) => ({ lineageId: 1, key, fingerprint: 'f', locationPrefix: '/v1/pets/' });
  /** The real connection, counting the write transactions the writer begins (`BEGIN IMMEDIATE`). */
  const counting = (real: BetterSqlite3.Database) => {
    let begun = 0;
    const proxy = new Proxy(real, {
      get(target, prop) {
        if (prop === 'transaction')
          return (fn: (...args: never[]) => unknown) => {
            const t = target.transaction(fn);
            return Object.assign((...args: never[]) => t(...args), {
              immediate: (...args: never[]) => {
                begun++;
                return t.immediate(...args);
              },
            });
          };
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    return { db: proxy, begun: () => begun };
  };
  const names = () => db.prepare('SELECT "name" FROM "Pet" ORDER BY "id"').pluck().all();
  const keys = () => db.prepare('SELECT "key" FROM "IdempotencyRecord" ORDER BY "petId"').pluck().all();

  it.each([
    ['pet', { name: 'refused', categoryId: 1 }, scope('k-refused-pet')],
    ['record (after its pet went in)', { name: 'orphan?', categoryId: 1 }, scope('refused')],
  ])('a member whose %s is refused fails alone; the others commit', async (_what, refusedPet, refusedScope) => {
    const commits: number[] = [];
    const conn = counting(db);
    const writes = sqlitePetWrites(conn.db, { ttlMs: 60_000, onCommit: (pets) => commits.push(pets.length) });
    // Submitted in one turn: one batch.
    const settled = await Promise.allSettled([
      writes.createOnce({ name: 'a', categoryId: 1 }, scope('k-a')),
      writes.create({ name: 'b', categoryId: 2, status: 'sold' }),
      writes.createOnce(refusedPet, refusedScope),
      writes.createOnce({ name: 'c', categoryId: 3 }, scope('k-c')),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(String((settled[2] as PromiseRejectedResult).reason)).toMatch(/refused/);
    expect(commits).toEqual([3]); // one commit, told of the three pets it made
    expect(conn.begun()).toBe(2); // all together, rolled back; then member by member
    expect(names()).toEqual(['a', 'b', 'c']);
    expect(keys()).toEqual(['k-a', 'k-c']);
    const [a, b, , c] = settled.map((s) => (s.status === 'fulfilled' ? s.value : undefined));
    expect(a).toMatchObject({ kind: 'created', pet: { name: 'a' }, answer: { status: 201 } });
    expect(b).toMatchObject({ name: 'b', categoryId: 2, status: 'sold' });
    expect(c).toMatchObject({ kind: 'created', pet: { name: 'c' } });
    // Ids as committed, in order of submission.
    const ids = db.prepare('SELECT "id" FROM "Pet" ORDER BY "id"').pluck().all();
    expect([a, b, c].map((v) => (v && 'kind' in v ? (v.kind === 'created' ? v.pet.id : 0) : v?.id))).toEqual(ids);
    await writes.closed();
  });

  it('a batch that cannot take the write lock fails as a whole, once, with the lock error', async () => {
    db.pragma('busy_timeout = 200');
    const other = new BetterSqlite3(join(dir, 'writes.db'));
    other.exec('BEGIN IMMEDIATE'); // another process holds the write lock
    try {
      const conn = counting(db);
      const writes = sqlitePetWrites(conn.db, { ttlMs: 60_000 });
      const settled = await Promise.allSettled([
        writes.createOnce({ name: 'a', categoryId: 1 }, scope('k-a')),
        writes.create({ name: 'b', categoryId: 1 }),
      ]);
      for (const s of settled) {
        expect(s.status).toBe('rejected');
        expect((s as PromiseRejectedResult).reason).toMatchObject({ code: 'SQLITE_BUSY' });
      }
      // One wait for the lock, not a second one for a member-by-member retry (that is only for a refused member).
      expect(conn.begun()).toBe(1);
      await writes.closed();
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(names()).toEqual([]);
  });

  it('a batch where nothing is refused commits every member once', async () => {
    const conn = counting(db);
    const writes = sqlitePetWrites(conn.db, { ttlMs: 60_000 });
    const outcomes = await Promise.all([
      writes.createOnce({ name: 'x', categoryId: 1 }, scope('same')),
      writes.createOnce({ name: 'x', categoryId: 1 }, scope('same')), // the first's record, in the same transaction
      writes.create({ name: 'y', categoryId: 1 }),
    ]);
    expect(outcomes[0]).toMatchObject({ kind: 'created' });
    expect(outcomes[1]).toMatchObject({ kind: 'stored', fingerprint: 'f' });
    expect(names()).toEqual(['x', 'y']);
    expect(conn.begun()).toBe(1); // one transaction, no savepoint form
    await writes.closed();
  });
});
