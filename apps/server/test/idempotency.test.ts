/**
 * Idempotency-Key on POST /v1/pets (issue #14): the stored answer replayed byte for byte, 422 for another body, 409
 * while the first is being committed, never two pets, errors not stored, keys scoped per API key; on SQLite and
 * PostgreSQL, and across two replicas sharing one PostgreSQL database.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/database.js';
import {
  createTestDatabase,
  databaseConfig,
  eventually,
  jsonPost,
  PROVIDERS,
  startTestServer,
  useTestServer,
} from './helpers.js';
import { petsOf, type PetPage } from '../src/db/pets/page.js';

const post = (url: string, key: string, body: unknown, idempotencyKey?: string) => {
  const init = jsonPost(key, body);
  if (idempotencyKey !== undefined) (init.headers as Record<string, string>)['Idempotency-Key'] = idempotencyKey;
  return fetch(`${url}/v1/pets`, init);
};

async function petCount(server: { db: { pets: { list(o: { limit: number }): Promise<PetPage> } } }): Promise<number> {
  return petsOf(await server.db.pets.list({ limit: 1000 })).length;
}

describe.each(PROVIDERS)('Idempotency-Key on %s', (provider) => {
  const ctx = useTestServer(provider);

  it('replays the first answer byte for byte, with Idempotent-Replayed, and creates one pet', async () => {
    const key = await ctx.server.key('enterprise', { perMinute: 1000, perDay: 100000 });
    const before = await petCount(ctx.server);
    const idem = randomUUID();
    const first = await post(ctx.server.url, key, { name: 'Once', categoryId: 7, status: 'available' }, idem);
    const firstBody = await first.text();
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await post(
      ctx.server.url,
      key,
      { status: 'available', categoryId: 7, name: 'Once', ignored: true },
      idem,
    );
    expect(again.status).toBe(201);
    expect(await again.text()).toBe(firstBody);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(await petCount(ctx.server)).toBe(before + 1);
    const pet = JSON.parse(firstBody) as { id: number };
    expect(first.headers.get('location')).toBe(`/v1/pets/${pet.id}`);
  });

  it('refuses the same key with a different body (422) and keeps the first pet only', async () => {
    const key = await ctx.server.key('enterprise', { perMinute: 1000, perDay: 100000 });
    const idem = randomUUID();
    expect((await post(ctx.server.url, key, { name: 'First', categoryId: 1 }, idem)).status).toBe(201);
    const before = await petCount(ctx.server);
    const other = await post(ctx.server.url, key, { name: 'Second', categoryId: 1 }, idem);
    expect(other.status).toBe(422);
    expect(await other.json()).toMatchObject({ code: 'idempotency_key_reused', status: 422 });
    expect(await petCount(ctx.server)).toBe(before);
  });

  it('scopes keys to the API key that sends them', async () => {
    const a = await ctx.server.key('enterprise', { perMinute: 1000, perDay: 100000 });
    const b = await ctx.server.key('enterprise', { perMinute: 1000, perDay: 100000 });
    const idem = randomUUID();
    const first = (await (await post(ctx.server.url, a, { name: 'A', categoryId: 1 }, idem)).json()) as { id: number };
    const second = await post(ctx.server.url, b, { name: 'B', categoryId: 1 }, idem);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(((await second.json()) as { id: number }).id).not.toBe(first.id);
  });

  it('does not store errors: a corrected request with the same key creates the pet', async () => {
    const key = await ctx.server.key('enterprise', { perMinute: 1000, perDay: 100000 });
    const idem = randomUUID();
    const bad = await post(ctx.server.url, key, { name: '', categoryId: 1 }, idem);
    expect(bad.status).toBe(400);
    const good = await post(ctx.server.url, key, { name: 'Fixed', categoryId: 1 }, idem);
    expect(good.status).toBe(201);
    expect(good.headers.get('idempotent-replayed')).toBeNull();
  });

  it('refuses malformed keys with 400 and creates nothing', async () => {
    const key = await ctx.server.key('enterprise', { perMinute: 1000, perDay: 100000 });
    const before = await petCount(ctx.server);
    for (const bad of ['x'.repeat(256), 'caf\u00e9']) {
      const res = await fetch(`${ctx.server.url}/v1/pets`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${key}`,
          'Content-Type': 'application/json',
          'Idempotency-Key': Buffer.from(bad, 'utf8').toString('latin1'),
        },
        body: JSON.stringify({ name: 'No', categoryId: 1 }),
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'invalid_request' });
    }
    expect(await petCount(ctx.server)).toBe(before);
    // 255 printable characters are a key.
    expect((await post(ctx.server.url, key, { name: 'Long key', categoryId: 1 }, '~'.repeat(255))).status).toBe(201);
  });

  it('answers concurrent requests with one key: one pet, the others 409 with Retry-After or the replay', async () => {
    const key = await ctx.server.key('enterprise', { perMinute: 1000, perDay: 100000 });
    const before = await petCount(ctx.server);
    const idem = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => post(ctx.server.url, key, { name: 'Race', categoryId: 3 }, idem)),
    );
    const created = answers.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') === null);
    expect(created).toHaveLength(1);
    for (const r of answers) {
      expect([201, 409]).toContain(r.status);
      if (r.status === 409) {
        expect(r.headers.get('retry-after')).toBe('1');
        expect(await r.json()).toMatchObject({ code: 'idempotency_key_in_use', status: 409 });
      }
    }
    expect(await petCount(ctx.server)).toBe(before + 1);
  });

  it('commits creates that arrive together, each answered with its own pet', async () => {
    const key = await ctx.server.key('enterprise', { perMinute: 1000, perDay: 100000 });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        post(ctx.server.url, key, { name: `together-${i}`, categoryId: i + 1 }, i % 2 ? randomUUID() : undefined),
      ),
    );
    const pets = await Promise.all(
      answers.map(async (r) => ({
        status: r.status,
        pet: (await r.json()) as { id: number; name: string; categoryId: number },
      })),
    );
    for (const [i, { status, pet }] of pets.entries()) {
      expect(status).toBe(201);
      expect(pet).toMatchObject({ name: `together-${i}`, categoryId: i + 1 });
      expect(await ctx.server.db.pets.get(pet.id)).toEqual({ id: pet.id, name: `together-${i}`, categoryId: i + 1 });
    }
    expect(new Set(pets.map((p) => p.pet.id)).size).toBe(20);
  });
});

describe('Idempotency-Key across two replicas on one PostgreSQL database', () => {
  it('never makes two pets for one key, whichever replica each request reaches', async () => {
    const database = await createTestDatabase('postgresql');
    try {
      const a = await startTestServer(database.target);
      const b = await startTestServer(database.target);
      try {
        const key = await a.key('enterprise', { perMinute: 10000, perDay: 100000 });
        for (let round = 0; round < 5; round++) {
          const idem = randomUUID();
          const answers = await Promise.all(
            Array.from({ length: 10 }, (_, i) =>
              post((i % 2 ? a : b).url, key, { name: `replica-${round}`, categoryId: 1 }, idem),
            ),
          );
          const bodies = await Promise.all(answers.map((r) => r.text()));
          const fresh = answers.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') === null);
          expect(fresh).toHaveLength(1);
          for (const [i, r] of answers.entries()) {
            expect([201, 409]).toContain(r.status);
            if (r.status === 201) expect(bodies[i]).toBe(bodies[answers.indexOf(fresh[0]!)]);
          }
        }
        const client = new pg.Client({
          connectionString: database.target.provider === 'postgresql' ? database.target.url : '',
        });
        await client.connect();
        try {
          const { rows } = await client.query<{ n: string }>(
            `SELECT count(*) AS n FROM "Pet" WHERE "name" LIKE 'replica-%'`,
          );
          expect(rows[0]?.n).toBe('5');
        } finally {
          await client.end();
        }
      } finally {
        await a.close();
        await b.close();
      }
    } finally {
      await database.drop();
    }
  });
});

describe.each(PROVIDERS)('idempotency records on %s', (provider) => {
  it('are purged once expired, in bounded steps run by later commits', async () => {
    const database = await createTestDatabase(provider);
    // Records expire at once, and every commit may run a purge step.
    const db = await openDatabase(databaseConfig(database.target, { idempotencyTtlMs: 0 }), {
      idempotencyPurgeEveryMs: 0,
    });
    try {
      const scope = { lineageId: 1, key: 'expired-probe', fingerprint: 'f', locationPrefix: '/v1/pets/' };
      expect((await db.pets.createOnce({ name: 'Probe', categoryId: 1 }, scope)).kind).toBe('created');
      // PostgreSQL purges beside the batch (never holding a create): the key is free once a later commit's step ran.
      await eventually(async () => {
        await db.pets.create({ name: 'trigger', categoryId: 1 });
        return (await db.pets.createOnce({ name: 'Probe', categoryId: 1 }, scope)).kind === 'created';
      });
    } finally {
      await db.close();
      await database.drop();
    }
  });

  it('keep a record for its time to live: the key replays', async () => {
    const database = await createTestDatabase(provider);
    const db = await openDatabase(databaseConfig(database.target), { idempotencyPurgeEveryMs: 0 });
    try {
      const scope = { lineageId: 1, key: 'kept', fingerprint: 'f', locationPrefix: '/v1/pets/' };
      const first = await db.pets.createOnce({ name: 'Kept', categoryId: 1 }, scope);
      for (let i = 0; i < 3; i++) await db.pets.create({ name: 'trigger', categoryId: 1 });
      const again = await db.pets.createOnce({ name: 'Kept', categoryId: 1 }, scope);
      expect(first.kind).toBe('created');
      expect(again).toEqual({
        kind: 'stored',
        fingerprint: 'f',
        answer: first.kind === 'created' ? first.answer : undefined,
      });
    } finally {
      await db.close();
      await database.drop();
    }
  });
});
