import { describe, expect, it } from 'vitest';
import { useOpenDatabase } from '../../test/helpers.js';
import { createApiKey } from './admin.js';
import { LastUsedRecorder } from './last-used.js';

describe('LastUsedRecorder', () => {
  const opened = useOpenDatabase('sqlite');
  const writes: { at: Date; ids: readonly number[]; kind?: string }[] = [];
  const store = {
    recordLastUsed: (at: Date, ids: readonly number[]) => {
      writes.push({ at, ids: [...ids] });
      return opened.db.apiKeys.recordLastUsed(at, ids);
    },
    recordLastDeprecatedCall: (at: Date, ids: readonly number[]) => {
      writes.push({ at, ids: [...ids], kind: 'deprecatedCall' });
      return opened.db.apiKeys.recordLastDeprecatedCall(at, ids);
    },
  };

  /** `n` Free keys, created one after another (ascending ids). */
  const freeKeys = async (n: number) => {
    const keys = [];
    for (let i = 0; i < n; i++) keys.push((await createApiKey(opened.db.apiKeys, { plan: 'free' })).record);
    return keys;
  };

  it('writes each key once per minute, in one statement per minute, to the minute', async () => {
    let now = Date.UTC(2030, 0, 1, 10, 0, 12, 345);
    const recorder = new LastUsedRecorder(store, { intervalMs: 60_000, now: () => now });
    const a = (await createApiKey(opened.db.apiKeys, { plan: 'free' })).record;
    const b = (await createApiKey(opened.db.apiKeys, { plan: 'free' })).record;
    writes.length = 0;
    for (let i = 0; i < 100; i++) recorder.record(a.id);
    recorder.record(b.id);
    await recorder.flush();
    expect(writes).toEqual([{ at: new Date(Date.UTC(2030, 0, 1, 10, 0)), ids: [a.id, b.id] }]);
    expect((await opened.db.apiKeys.findById(a.id))?.lastUsedAt).toEqual(new Date(Date.UTC(2030, 0, 1, 10, 0)));

    // Same minute again: nothing to write.
    recorder.record(a.id);
    await recorder.flush();
    expect(writes).toHaveLength(1);

    now += 60_000;
    recorder.record(b.id);
    await recorder.close();
    expect(writes).toHaveLength(2);
    expect((await opened.db.apiKeys.findById(b.id))?.lastUsedAt).toEqual(new Date(Date.UTC(2030, 0, 1, 10, 1)));
    expect((await opened.db.apiKeys.findById(a.id))?.lastUsedAt).toEqual(new Date(Date.UTC(2030, 0, 1, 10, 0)));
  });

  it('never moves a last use backwards (replicas flush in any order)', async () => {
    const key = (await createApiKey(opened.db.apiKeys, { plan: 'free' })).record;
    await opened.db.apiKeys.recordLastUsed(new Date(Date.UTC(2030, 0, 1, 10, 5)), [key.id]);
    await opened.db.apiKeys.recordLastUsed(new Date(Date.UTC(2030, 0, 1, 10, 4)), [key.id]);
    expect((await opened.db.apiKeys.findById(key.id))?.lastUsedAt).toEqual(new Date(Date.UTC(2030, 0, 1, 10, 5)));
  });

  it('notes calls of deprecated operations apart, in the same batches, one statement per minute', async () => {
    let now = Date.UTC(2030, 0, 2, 9, 30, 5);
    const recorder = new LastUsedRecorder(store, { intervalMs: 60_000, now: () => now });
    const a = (await createApiKey(opened.db.apiKeys, { plan: 'free' })).record;
    const b = (await createApiKey(opened.db.apiKeys, { plan: 'free' })).record;
    writes.length = 0;
    for (let i = 0; i < 50; i++) {
      recorder.record(a.id);
      recorder.record(a.id, 'deprecatedCall');
      recorder.record(b.id);
    }
    await recorder.flush();
    const minute = new Date(Date.UTC(2030, 0, 2, 9, 30));
    expect(writes).toEqual([
      { at: minute, ids: [a.id, b.id] },
      { at: minute, ids: [a.id], kind: 'deprecatedCall' },
    ]);
    expect(await opened.db.apiKeys.findById(a.id)).toMatchObject({ lastUsedAt: minute, lastDeprecatedCallAt: minute });
    expect((await opened.db.apiKeys.findById(b.id))?.lastDeprecatedCallAt).toBeNull();

    now += 5 * 60_000;
    recorder.record(a.id, 'deprecatedCall');
    await recorder.close();
    expect(writes).toHaveLength(3);
    expect((await opened.db.apiKeys.findById(a.id))?.lastDeprecatedCallAt).toEqual(
      new Date(Date.UTC(2030, 0, 2, 9, 35)),
    );
    // Only forward, as lastUsedAt.
    await opened.db.apiKeys.recordLastDeprecatedCall(minute, [a.id]);
    expect((await opened.db.apiKeys.findById(a.id))?.lastDeprecatedCallAt).toEqual(
      new Date(Date.UTC(2030, 0, 2, 9, 35)),
    );
  });

  it('writes many keys in statements of at most `chunk` keys, the event loop running between them', async () => {
    const now = Date.UTC(2030, 0, 3, 8, 15, 30);
    const recorder = new LastUsedRecorder(store, { intervalMs: 60_000, chunk: 2, now: () => now });
    const keys = await freeKeys(5);
    writes.length = 0;
    for (const key of keys) recorder.record(key.id);
    // Queued behind the flush's first write: it runs in the next turn of the loop, which the flush must wait for.
    let writtenWhenTheLoopTurned: number | undefined;
    const flushed = recorder.flush();
    setImmediate(() => (writtenWhenTheLoopTurned = writes.length));
    await flushed;
    const minute = new Date(Date.UTC(2030, 0, 3, 8, 15));
    expect(writes).toEqual([
      { at: minute, ids: [keys[0]!.id, keys[1]!.id] },
      { at: minute, ids: [keys[2]!.id, keys[3]!.id] },
      { at: minute, ids: [keys[4]!.id] },
    ]);
    expect(writtenWhenTheLoopTurned).toBe(1);
    for (const key of keys) expect((await opened.db.apiKeys.findById(key.id))?.lastUsedAt).toEqual(minute);
  });

  it('writes the keys of a minute in ascending id order, whatever order they were used in', async () => {
    const now = Date.UTC(2030, 0, 3, 9, 5, 30);
    const recorder = new LastUsedRecorder(store, { intervalMs: 60_000, chunk: 2, now: () => now });
    const keys = await freeKeys(5);
    const ids = keys.map((key) => key.id);
    writes.length = 0;
    for (const i of [3, 0, 4, 2, 1]) recorder.record(ids[i]!);
    await recorder.flush();
    const minute = new Date(Date.UTC(2030, 0, 3, 9, 5));
    expect(writes).toEqual([
      { at: minute, ids: [ids[0], ids[1]] },
      { at: minute, ids: [ids[2], ids[3]] },
      { at: minute, ids: [ids[4]] },
    ]);
    for (const key of keys) expect((await opened.db.apiKeys.findById(key.id))?.lastUsedAt).toEqual(minute);
  });
});
