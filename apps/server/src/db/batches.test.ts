import { describe, expect, it } from 'vitest';
import { batches, type Settled } from './batches.js';

describe('batches', () => {
  it('commits calls of one turn together and answers each with its own result, only after the commit', async () => {
    const seen: number[][] = [];
    let committed = false;
    const { submit } = batches<number, string>(
      async (items) => {
        seen.push([...items]);
        await new Promise((resolve) => setTimeout(resolve, 5));
        committed = true;
        return items.map((n): Settled<string> =>
          n === 3 ? { ok: false, error: new Error('three') } : { ok: true, value: `v${n}` },
        );
      },
      { maxBatch: 10, maxInFlight: 1 },
    );
    const answers = [1, 2, 3, 4].map((n) =>
      submit(n).then(
        (value) => ({ value, committed }),
        (error: Error) => ({ error: error.message, committed }),
      ),
    );
    expect(await Promise.all(answers)).toEqual([
      { value: 'v1', committed: true },
      { value: 'v2', committed: true },
      { error: 'three', committed: true },
      { value: 'v4', committed: true },
    ]);
    expect(seen).toEqual([[1, 2, 3, 4]]);
  });

  it('queues what arrives during a commit for the next batch, bounded by maxBatch', async () => {
    const seen: number[][] = [];
    let release: () => void = () => undefined;
    const { submit } = batches<number, number>(
      async (items) => {
        seen.push([...items]);
        if (seen.length === 1) await new Promise<void>((resolve) => (release = resolve));
        return items.map((value) => ({ ok: true, value }));
      },
      { maxBatch: 3, maxInFlight: 1 },
    );
    const first = submit(0);
    await new Promise((resolve) => setImmediate(resolve));
    const rest = [1, 2, 3, 4, 5].map((n) => submit(n));
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([[0]]);
    release();
    expect(await Promise.all([first, ...rest])).toEqual([0, 1, 2, 3, 4, 5]);
    expect(seen).toEqual([[0], [1, 2, 3], [4, 5]]);
  });

  it('fails every member of a batch whose commit throws, and goes on with the next batch', async () => {
    let calls = 0;
    const { submit } = batches<number, number>(
      async (items) => {
        calls++;
        if (calls === 1) throw new Error('database down');
        return items.map((value) => ({ ok: true, value }));
      },
      { maxBatch: 10, maxInFlight: 1 },
    );
    const failed = await Promise.allSettled([submit(1), submit(2)]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(await submit(3)).toBe(3);
  });
});
