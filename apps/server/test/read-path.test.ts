/**
 * The read path (prepared SQL on both drivers) against the catalogue as it was created: every filter, cursor and limit
 * answers the same pets, as the same bytes as a serialization of them, on every provider.
 */
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/database.js';
import { petsOf } from '../src/db/pets/page.js';
import type { Database } from '../src/db/types.js';
import { createTestDatabase, databaseConfig, POOLED_PROVIDERS, type TestDatabase } from './helpers.js';

describe.each(POOLED_PROVIDERS)('prepared reads on %s', (provider) => {
  let target: TestDatabase;
  let db: Database;
  const created: Array<{ id: number; name: string; categoryId: number; status?: string }> = [];

  beforeAll(async () => {
    target = await createTestDatabase(provider);
    db = await openDatabase(databaseConfig(target.target));
    const statuses = ['available', 'pending', 'sold', undefined] as const;
    for (let i = 0; i < 12; i++) {
      const status = statuses[i % 4];
      created.push(
        await db.pets.create({
          // One name with everything JSON escapes or keeps (control characters only by hand: the API refuses them).
          name: i === 7 ? `p7 "q" \\ / é 🐾 \u2028 \n\t\b\f\r\u0001\u001f\u007f` : `p${i}`,
          categoryId: i === 5 ? 9007199254740991 : i + 1,
          ...(status ? { status } : {}),
        }),
      );
    }
  });
  afterAll(async () => {
    await db.close();
    await target.drop();
  });

  it('list agrees with the catalogue for every filter, cursor and limit', async () => {
    for (const status of [undefined, 'available', 'pending', 'sold'] as const) {
      for (const afterId of [undefined, created[0]!.id, created[6]!.id, created[11]!.id]) {
        for (const limit of [1, 3, 100]) {
          const matching = created.filter(
            (p) => (status === undefined || p.status === status) && (afterId === undefined || p.id > afterId),
          );
          const expected = matching.slice(0, limit);
          const page = await db.pets.list({ limit, status, afterId });
          expect(petsOf(page)).toEqual(expected);
          // The same bytes as a serialization of the pets, and the cursor and next-page flag they call for.
          expect({ ...page }).toEqual({
            json: JSON.stringify(expected),
            lastId: expected.at(-1)?.id,
            more: matching.length > limit,
          });
        }
      }
    }
  });

  it('get answers the pet, int64 values exactly, and undefined for a missing id', async () => {
    expect(await db.pets.get(created[5]!.id)).toEqual(created[5]);
    expect((await db.pets.get(created[5]!.id))?.categoryId).toBe(9007199254740991);
    expect(await db.pets.get(created[3]!.id)).not.toHaveProperty('status');
    expect(await db.pets.get(9007199254740991)).toBeUndefined();
    for (const pet of created) expect(await db.pets.get(pet.id)).toEqual(pet);
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
    // A get of the missing id just below it is answered (undefined), not refused for its neighbour.
    expect(await db.pets.get(9007199254740991)).toBeUndefined();
    // Pages that stop before it are unaffected.
    expect(petsOf(await db.pets.list({ limit: 1, status: 'sold' }))).toEqual([created[2]]);
  });
});
