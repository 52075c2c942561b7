import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDatabaseUrl } from './config.js';
import { openDatabase } from './db/database.js';
import type { Database } from './db/types.js';
import { createTestDatabase, type TestDatabase } from '../test/helpers.js';
import { createApiKey, generateRawKey, hashKey, KEY_LOOKUP_NEEDED, KeyResolver, looksLikeKey } from './keys.js';

describe('API keys', () => {
  let dir: string;
  let db: Database;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keys-'));
    db = await openDatabase(parseDatabaseUrl(`file:${join(dir, 'k.db')}`));
  });
  afterAll(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('are random, 256-bit, recognisable, and stored only as a hash plus a display prefix', async () => {
    const a = generateRawKey();
    expect(looksLikeKey(a)).toBe(true);
    expect(a).not.toBe(generateRawKey());
    expect(Buffer.from(a.slice(4), 'base64url')).toHaveLength(32);
    const { raw, record } = await createApiKey(db.apiKeys, { plan: 'pro', name: 'ci' });
    expect(record.hash).toBe(hashKey(raw));
    expect(record.prefix).toBe(raw.slice(0, 12));
    expect(JSON.stringify(record)).not.toContain(raw.slice(12));
  });

  it('refuses custom limits on non-enterprise plans', async () => {
    await expect(createApiKey(db.apiKeys, { plan: 'free', perMinute: 5 })).rejects.toThrow(/enterprise/);
    const { record } = await createApiKey(db.apiKeys, { plan: 'enterprise', perMinute: 5, perDay: 50 });
    expect(record).toMatchObject({ plan: 'enterprise', perMinute: 5, perDay: 50 });
  });

  it('resolves through a cache: a revocation takes effect once the cache time has passed', async () => {
    let now = 1_000_000;
    const resolver = new KeyResolver(db.apiKeys, 5000, () => now);
    const { raw, record } = await createApiKey(db.apiKeys, { plan: 'free' });
    expect((await resolver.resolve(raw))?.id).toBe(record.id);
    await db.apiKeys.revoke({ id: record.id }, new Date());
    now += 4999;
    expect((await resolver.resolve(raw))?.id).toBe(record.id); // still cached
    now += 2;
    expect(await resolver.resolve(raw)).toBeUndefined();
    expect(await resolver.resolve('ask_' + 'x'.repeat(43))).toBeUndefined();
    expect(await resolver.resolve('nope')).toBeUndefined();
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
