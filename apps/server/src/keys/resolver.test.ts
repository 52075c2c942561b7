import { describe, expect, it } from 'vitest';
import { useOpenDatabase } from '../../test/helpers.js';
import { createApiKey } from './admin.js';
import { generateRawKey } from './format.js';
import { hashKey, keyHashOf, KEY_LOOKUP_NEEDED, KeyResolver, PRIORITY_STALE_MS } from './resolver.js';

describe('KeyResolver', () => {
  const opened = useOpenDatabase('sqlite');
  let lookups = 0;
  const store = { findByHash: (hash: string) => (lookups++, opened.db.apiKeys.findByHash(hash)) };

  it('stores a key only as its hash and a display prefix', async () => {
    const { raw, record } = await createApiKey(opened.db.apiKeys, { plan: 'pro', name: 'ci' });
    expect(record.hash).toBe(hashKey(raw));
    expect(record.prefix).toBe(raw.slice(0, 12));
    expect(JSON.stringify(record)).not.toContain(raw.slice(12));
    await expect(createApiKey(opened.db.apiKeys, { plan: 'free', perMinute: 5 })).rejects.toThrow(/enterprise/);
  });

  it('refuses a key whose checksum does not match, or of no known shape, without a lookup', async () => {
    const resolver = new KeyResolver(store, 5000);
    const raw = generateRawKey();
    const typo = raw.slice(0, -1) + (raw.endsWith('A') ? 'B' : 'A');
    lookups = 0;
    expect(await resolver.resolve(keyHashOf(typo))).toBeUndefined();
    expect(await resolver.resolve(keyHashOf('nope'))).toBeUndefined();
    expect(resolver.peek(keyHashOf(typo))).toBeUndefined();
    expect(lookups).toBe(0);
    // A well-formed unknown key, and a legacy-shaped one, are looked up (legacy keys carry no checksum).
    expect(await resolver.resolve(keyHashOf(raw))).toBeUndefined();
    expect(await resolver.resolve(keyHashOf(`ask_${'x'.repeat(43)}`))).toBeUndefined();
    expect(lookups).toBe(2);
  });

  it("trusts no record whose hash is not the key's, looked up or cached", async () => {
    const { record: other } = await createApiKey(opened.db.apiKeys, { plan: 'pro' });
    const raw = generateRawKey();
    // A store that answers every hash with another key's row (a corrupt index, a wrong query): the compare refuses it.
    const wrong = { findByHash: () => Promise.resolve(other) };
    const resolver = new KeyResolver(wrong, 5000);
    expect(await resolver.resolve(keyHashOf(raw))).toBeUndefined();
    expect(resolver.peek(keyHashOf(raw))).toBeUndefined(); // from the cache (not KEY_LOOKUP_NEEDED), compared again
  });

  it('caches lookups for the TTL; clear() forgets them at once', async () => {
    let now = 1_000_000;
    const resolver = new KeyResolver(store, 5000, () => now);
    const { raw, record } = await createApiKey(opened.db.apiKeys, { plan: 'free' });
    expect(resolver.peek(keyHashOf(raw))).not.toBeUndefined();
    expect((await resolver.resolve(keyHashOf(raw))) as { id: number }).toMatchObject({ id: record.id });
    await opened.db.apiKeys.revoke({ id: record.id }, new Date());
    now += 4999;
    expect(resolver.peek(keyHashOf(raw))).toMatchObject({ id: record.id }); // still cached: the TTL is the safety net
    resolver.clear();
    expect(await resolver.resolve(keyHashOf(raw))).toBeUndefined();
  });

  it('tells a priority from a lookup past its TTL, up to PRIORITY_STALE_MS, never after clear()', async () => {
    let now = 1_000_000;
    const resolver = new KeyResolver(store, 5000, () => now);
    const { raw, record } = await createApiKey(opened.db.apiKeys, { plan: 'pro' });
    const hash = keyHashOf(raw);
    expect(resolver.peekForPriority(hash)).toBe(KEY_LOOKUP_NEEDED); // never looked up
    await resolver.resolve(hash);
    now += 5000;
    expect(resolver.peek(hash)).toBe(KEY_LOOKUP_NEEDED); // expired: a request is let in only after a lookup
    expect(resolver.peekForPriority(hash)).toMatchObject({ id: record.id, plan: 'pro' });
    now += PRIORITY_STALE_MS - 1;
    expect(resolver.peekForPriority(hash)).toMatchObject({ id: record.id });
    now += 1;
    expect(resolver.peekForPriority(hash)).toBe(KEY_LOOKUP_NEEDED);
    await resolver.resolve(hash);
    now += 6000;
    resolver.clear();
    expect(resolver.peekForPriority(hash)).toBe(KEY_LOOKUP_NEEDED);
    expect(resolver.peekForPriority(undefined)).toBeUndefined();
  });

  it('a lookup that was in flight when the cache was cleared does not refill it', async () => {
    let read!: () => void;
    let release!: () => void;
    const hasRead = new Promise<void>((resolve) => (read = resolve));
    const gate = new Promise<void>((resolve) => (release = resolve));
    // The lookup reads the row, then waits: the key changes and the cache is cleared before its answer arrives.
    const slow = {
      findByHash: async (hash: string) => {
        const record = await opened.db.apiKeys.findByHash(hash);
        read();
        await gate;
        return record;
      },
    };
    const resolver = new KeyResolver(slow, 60_000);
    const { raw, record } = await createApiKey(opened.db.apiKeys, { plan: 'free' });
    const pending = resolver.resolve(keyHashOf(raw));
    await hasRead;
    await opened.db.apiKeys.revoke({ id: record.id }, new Date());
    resolver.clear();
    release();
    expect(await pending).toMatchObject({ id: record.id }); // what it read before the change
    expect(resolver.peek(keyHashOf(raw))).toBe(KEY_LOOKUP_NEEDED); // nothing of it was kept
  });

  it("answers 'expired' for a key past its expiry", async () => {
    let now = Date.UTC(2030, 0, 1);
    const resolver = new KeyResolver(store, 60_000, () => now);
    const { raw } = await createApiKey(opened.db.apiKeys, { plan: 'free', expiresAt: new Date(now + 1000) });
    expect(await resolver.resolve(keyHashOf(raw))).toMatchObject({ plan: 'free' });
    now += 1000;
    expect(resolver.peek(keyHashOf(raw))).toBe('expired');
  });
  it('without a change notification, a revocation takes effect once the cache time has passed (the safety net)', async () => {
    let now = 1_000_000;
    const resolver = new KeyResolver(opened.db.apiKeys, 5000, () => now);
    const { raw, record } = await createApiKey(opened.db.apiKeys, { plan: 'free' });
    expect(await resolver.resolve(keyHashOf(raw))).toMatchObject({ id: record.id });
    await opened.db.apiKeys.revoke({ id: record.id }, new Date());
    now += 4999;
    expect(await resolver.resolve(keyHashOf(raw))).toMatchObject({ id: record.id }); // still cached
    now += 2;
    expect(await resolver.resolve(keyHashOf(raw))).toBeUndefined();
  });

  it('peek answers what resolve answers, from the cache only, and asks for a lookup otherwise', async () => {
    let now = 1_000_000;
    const resolver = new KeyResolver(opened.db.apiKeys, 5000, () => now);
    const { raw, record } = await createApiKey(opened.db.apiKeys, { plan: 'free' });
    expect(resolver.peek(keyHashOf('nope'))).toBeUndefined();
    expect(resolver.peek(keyHashOf(raw))).toBe(KEY_LOOKUP_NEEDED);
    expect(await resolver.resolve(keyHashOf(raw))).toMatchObject({ id: record.id });
    expect(resolver.peek(keyHashOf(raw))).toMatchObject({ id: record.id });
    await opened.db.apiKeys.revoke({ id: record.id }, new Date());
    now += 4999;
    expect(resolver.peek(keyHashOf(raw))).toMatchObject({ id: record.id }); // still cached, as resolve
    now += 2;
    expect(resolver.peek(keyHashOf(raw))).toBe(KEY_LOOKUP_NEEDED);
    expect(await resolver.resolve(keyHashOf(raw))).toBeUndefined();
    expect(resolver.peek(keyHashOf(raw))).toBeUndefined(); // the revoked answer is cached too
    const unknown = 'ask_' + 'x'.repeat(43);
    expect(await resolver.resolve(keyHashOf(unknown))).toBeUndefined();
    expect(resolver.peek(keyHashOf(unknown))).toBeUndefined();
  });
});
