import { describe, expect, it } from 'vitest';
import { createReadQueue } from './read-queue.js';

/** Connections handed out by number; a query answers when the test says so. */
function harness(concurrency: number, slotTimeoutMs?: number) {
  let next = 0;
  const released: Array<{ connection: number; err?: Error }> = [];
  const sent: Array<{ key: string; connection: number; answer(value: string): void; fail(err: Error): void }> = [];
  const queue = createReadQueue<number, string>({
    concurrency,
    ...(slotTimeoutMs !== undefined && { slotTimeoutMs }),
    connect: () => Promise.resolve(++next),
    release: (connection, err) => released.push(err ? { connection, err } : { connection }),
  });
  const read = (key: string) =>
    queue.read(
      key,
      (connection) =>
        new Promise<string>((answer, fail) => {
          sent.push({ key, connection, answer, fail });
        }),
    );
  return { queue, read, sent, released };
}

const turns = async (n = 3) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('read queue', () => {
  it('identical reads of one turn share one query; different keys do not', async () => {
    const { queue, read, sent } = harness(4);
    const reads = [read('a'), read('a'), read('b'), read('a')];
    await turns();
    expect(sent.map((query) => query.key)).toEqual(['a', 'b']);
    sent[0]!.answer('A');
    sent[1]!.answer('B');
    expect(await Promise.all(reads)).toEqual(['A', 'A', 'B', 'A']);
    expect(queue.stats).toEqual({ reads: 4, queries: 2 });
  });

  it('keeps at most `concurrency` queries in flight; waiting identical reads share the next one', async () => {
    const { read, sent } = harness(2);
    const first = [read('a'), read('b'), read('c')];
    await turns();
    expect(sent.map((query) => query.key)).toEqual(['a', 'b']); // c waits for a slot
    const late = [read('c'), read('c')]; // join the waiting batch of c
    sent[0]!.answer('A');
    await turns();
    expect(sent.map((query) => query.key)).toEqual(['a', 'b', 'c']);
    sent[1]!.answer('B');
    sent[2]!.answer('C');
    expect(await Promise.all([...first, ...late])).toEqual(['A', 'B', 'C', 'C', 'C']);
  });

  it('a read that arrives after its batch was sent waits for a query of its own', async () => {
    const { read, sent } = harness(4);
    const early = read('a');
    await turns();
    expect(sent).toHaveLength(1);
    const late = read('a'); // the first query is on the wire: it may not show what happened since
    await turns();
    expect(sent).toHaveLength(2);
    sent[0]!.answer('old');
    sent[1]!.answer('new');
    expect([await early, await late]).toEqual(['old', 'new']);
  });

  it('a failed query fails its readers, gives its connection back with the error, and frees its slot', async () => {
    const { read, sent, released } = harness(1);
    const failing = [read('a'), read('a')];
    const after = read('b');
    await turns();
    const boom = new Error('boom');
    sent[0]!.fail(boom);
    await expect(Promise.all(failing)).rejects.toBe(boom);
    expect(released).toEqual([{ connection: 1, err: boom }]);
    await turns();
    sent[1]!.answer('B');
    expect(await after).toBe('B');
    expect(released.at(-1)).toEqual({ connection: 2 });
  });

  it('fails a batch that waits for a slot longer than slotTimeoutMs as busy; later reads get a batch of their own', async () => {
    const { read, sent } = harness(1, 50);
    const first = read('a');
    const waiting = read('b');
    await expect(waiting).rejects.toMatchObject({ name: 'DatabaseBusyError', code: 'DATABASE_BUSY' });
    const again = read('b'); // does not join the failed batch
    sent[0]!.answer('A');
    expect(await first).toBe('A');
    await turns();
    expect(sent.map((query) => query.key)).toEqual(['a', 'b']);
    sent[1]!.answer('B');
    expect(await again).toBe('B');
  });
});
