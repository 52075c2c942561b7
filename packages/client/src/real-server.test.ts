/** The client against the real built server, started here on a temporary SQLite file. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnimalStoreClient, createAnimalStoreClient } from './client.js';
import type { DeprecationNotice } from './deprecation.js';
import { type RealServer, startRealServer } from './test-support/server.js';

let server: RealServer;
let client: AnimalStoreClient;
const notices: DeprecationNotice[] = [];

beforeAll(async () => {
  server = await startRealServer();
  client = createAnimalStoreClient({
    baseUrl: server.baseUrl,
    apiKey: server.apiKey,
    onDeprecation: (notice) => notices.push(notice),
    retry: { maxRetries: 0 }, // a retry would hide a misbehaving server here
  });
}, 60_000);
afterAll(() => server?.stop());

describe('against the real server', () => {
  it('creates, gets and lists a pet', async () => {
    expect(client.rateLimit).toBeUndefined();
    const created = await client.createPet({ body: { name: 'Rex', categoryId: 7, status: 'pending' } });
    expect(created.status).toBe(201);
    if (created.status !== 201) throw new Error(JSON.stringify(created.body));
    expect(created.body).toMatchObject({ name: 'Rex', categoryId: 7, status: 'pending' });
    expect(created.headers.get('location')).toMatch(new RegExp(`/v1/pets/${created.body.id}$`));
    expect(client.rateLimit).toMatchObject({
      limit: expect.any(Number),
      remaining: expect.any(Number),
      reset: expect.any(Number),
    });
    expect(client.rateLimit!.remaining).toBeLessThan(client.rateLimit!.limit);

    const got = await client.getPet({ params: { petId: created.body.id } });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created.body);
    expect(got.headers.get('sunset')).toBeTruthy();
    expect(got.headers.get('link')).toContain('rel="successor-version"');
    expect(notices).toHaveLength(1);

    const listed = await client.listPets({ query: { status: 'pending' } });
    expect(listed.status).toBe(200);
    expect(listed.body).toContainEqual(created.body);

    const missing = await client.getPet({ params: { petId: 9007199254740991 } });
    expect(missing.status).toBe(404);
    if (missing.status === 404) expect(missing.body.code).toBe('not_found');
  });

  it('keeps int64 values above 2^31 exact', async () => {
    for (const categoryId of [3000000000, 9007199254740991]) {
      const created = await client.createPet({ body: { name: `Big ${categoryId}`, categoryId } });
      if (created.status !== 201) throw new Error(JSON.stringify(created.body));
      expect(created.body.categoryId).toBe(categoryId);
      const got = await client.getPet({ params: { petId: created.body.id } });
      expect(got.status === 200 && got.body.categoryId).toBe(categoryId);
    }
  });

  it('pages through every pet, following Link rel="next"', async () => {
    const made: number[] = [];
    for (let i = 0; i < 7; i++) {
      const created = await client.createPet({
        body: { name: `Sold ${i}`, categoryId: 3000000000 + i, status: 'sold' },
      });
      if (created.status !== 201) throw new Error(JSON.stringify(created.body));
      made.push(created.body.id);
    }
    const firstPage = await client.listPets({ query: { status: 'sold', limit: 3 } });
    expect(firstPage.body).toHaveLength(3);
    expect(firstPage.headers.get('link')).toContain('rel="next"');

    const seen: number[] = [];
    for await (const pet of client.paginatePets({ status: 'sold', pageSize: 3 })) {
      expect(pet.status).toBe('sold');
      seen.push(pet.id);
    }
    expect(seen).toEqual(made); // ordered by id, every page, nothing twice

    const everything: number[] = [];
    for await (const pet of client.paginatePets({ pageSize: 2 })) everything.push(pet.id);
    expect(new Set(everything).size).toBe(everything.length);
    expect(everything).toEqual(expect.arrayContaining(made));
  });

  it('answers 401 to a wrong key, without retrying, and the key stays out of errors', async () => {
    const wrong = createAnimalStoreClient({ baseUrl: server.baseUrl, apiKey: 'ask_wrong_key_000000000000' });
    const result = await wrong.listPets();
    expect(result.status).toBe(401);
    if (result.status === 401) expect(result.body).toMatchObject({ code: 'unauthorized', status: 401 });
    expect(wrong.rateLimit).toBeDefined(); // 401 carries X-RateLimit-* too
    await expect(async () => {
      for await (const _ of wrong.paginatePets());
    }).rejects.toThrow(/answered 401 \(unauthorized\)/);
  });

  it('revalidates with If-None-Match when cache is on: the server answers 304 and the client returns the stored body', async () => {
    const sent: Headers[] = [];
    const answered: number[] = [];
    const cached = createAnimalStoreClient({
      baseUrl: server.baseUrl,
      apiKey: server.apiKey,
      cache: true,
      retry: { maxRetries: 0 },
      fetch: async (input, init) => {
        sent.push(new Headers(init?.headers));
        const response = await fetch(input, init);
        answered.push(response.status);
        return response;
      },
    });
    const first = await cached.listPets({ query: { limit: 5 } });
    const second = await cached.listPets({ query: { limit: 5 } });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(sent[1]?.get('if-none-match')).toBe(first.headers.get('etag'));
    expect(answered).toEqual([200, 304]);
  });
});
