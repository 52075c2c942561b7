/**
 * Every field of a Pet, as the contract declares it, round-trips on both databases: through create, idempotent create
 * and its replay, get, and list (kept pages and pets, read from rows, one page at a time), as the bytes the API sends.
 * The fields and their values come from the contract's schema (test/pet-samples.ts): a field declared there, in
 * models.prisma and in one migration per provider is covered here without editing this file.
 */
import { IDEMPOTENCY_HEADERS, type NewPet } from '@animal-store/contract';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/database.js';
import { databaseConfig, jsonPost, PROVIDERS, useTestServer } from './helpers.js';
import { petJson, samplePets } from './pet-samples.js';

describe.each(PROVIDERS)('every field of a Pet on %s', (provider) => {
  const ctx = useTestServer(provider);

  it('round-trips through create, idempotent replay, get and list as the same bytes', async () => {
    const { server, database } = ctx;
    const key = await server.key('enterprise', { perMinute: 100_000, perDay: 1_000_000 });
    const auth = { headers: { Authorization: `Bearer ${key}` } };
    const made: Array<{ id: number; pet: NewPet }> = [];
    const expectPet = async (res: Response, pet: NewPet) => {
      expect(res.status).toBe(201);
      const id = Number(res.headers.get('location')?.split('/').at(-1));
      expect(await res.text()).toBe(petJson(id, pet));
      return id;
    };

    for (const [i, pet] of samplePets().entries()) {
      made.push({ id: await expectPet(await fetch(`${server.url}/v1/pets`, jsonPost(key, pet)), pet), pet });
      const once = jsonPost(key, pet);
      once.headers = { ...once.headers, 'Idempotency-Key': `fields-${i}` };
      const first = await fetch(`${server.url}/v1/pets`, once);
      const id = await expectPet(first, pet);
      made.push({ id, pet });
      const replay = await fetch(`${server.url}/v1/pets`, once);
      expect(replay.headers.get(IDEMPOTENCY_HEADERS.replayed)).toBe('true');
      expect(await expectPet(replay, pet)).toBe(id);
    }

    for (const { id, pet } of made) {
      const res = await fetch(`${server.url}/v1/pets/${id}`, auth);
      expect(await res.text()).toBe(petJson(id, pet));
    }
    const all = `[${made.map(({ id, pet }) => petJson(id, pet)).join(',')}]`;
    // Asked three times: read, remembered, then kept (SQLite's page cache); batched reads on PostgreSQL.
    for (let i = 0; i < 3; i++) expect(await (await fetch(`${server.url}/v1/pets?limit=100`, auth)).text()).toBe(all);
    // Page by page, after each cursor.
    const paged: unknown[] = [];
    for (let next: string | undefined = '/v1/pets?limit=3'; next !== undefined;) {
      const res = await fetch(`${server.url}${next}`, auth);
      paged.push(...((await res.json()) as unknown[]));
      next = /<([^>]+)>; rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
    }
    expect(JSON.stringify(paged)).toBe(all);

    // From the rows, with nothing kept or batched: another process's first reads.
    const cold = await openDatabase(
      databaseConfig(database.target, { pageCacheEntries: 0, petCacheEntries: 0, coalesceReads: false }),
    );
    try {
      expect((await cold.pets.list({ limit: 100 })).json).toBe(all);
      for (const { id, pet } of made) expect(JSON.stringify(await cold.pets.get(id))).toBe(petJson(id, pet));
    } finally {
      await cold.close();
    }
  });
});
