/**
 * How rate-limit.ts measures two limiters: the same decisions on the same identities, in alternating A/B rounds (the
 * order flipped each round to cancel drift), reported as medians and ours/theirs.
 */
import { performance } from 'node:perf_hooks';
import { table } from './table.js';
import { fmtInt, median } from './stats.js';

export type Consume = (key: string) => Promise<unknown>;

export const IDENTITIES = 10_000;
const keys = Array.from({ length: IDENTITIES }, (_, i) => `bench-key-${i}`);

/** Pseudo-random but identical key sequence for both contenders. */
export function keyAt(i: number): string {
  return keys[(i * 7919) % IDENTITIES]!;
}

export async function runSequential(consume: Consume, ops: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < ops; i++) await consume(keyAt(i));
  return ops / ((performance.now() - start) / 1000);
}

export async function runConcurrent(
  consume: Consume,
  ops: number,
  inFlight: number,
  key: (i: number) => string = keyAt,
): Promise<number> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < ops) {
      const i = next++;
      await consume(key(i));
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  return ops / ((performance.now() - start) / 1000);
}

export interface Row {
  scenario: string;
  ours: number[];
  theirs: number[];
}

/** A/B rounds after one warm-up each (JIT, script cache, connections); past `deadline` only the first round runs. */
export async function abRounds(
  scenario: string,
  ours: () => Promise<number>,
  theirs: () => Promise<number>,
  opts: { rounds: number; deadline: number },
): Promise<Row> {
  const row: Row = { scenario, ours: [], theirs: [] };
  await ours();
  await theirs();
  // Past the deadline a scenario still gets one round, so a busy machine shows a figure rather than n/a.
  for (let r = 0; r < opts.rounds && (r === 0 || Date.now() < opts.deadline); r++) {
    if (r % 2 === 0) {
      row.ours.push(await ours());
      row.theirs.push(await theirs());
    } else {
      row.theirs.push(await theirs());
      row.ours.push(await ours());
    }
  }
  return row;
}

/** The table the suite's ratelimit scenario reads back (rows starting `| memory` or `| redis`), then every round. */
export function printTable(rows: Row[]): void {
  const body = rows.map((r) => {
    const [o, t] = [median(r.ours), median(r.theirs)];
    return [r.scenario, fmtInt(o), fmtInt(t), `${(o / t).toFixed(2)}x`, String(r.ours.length)];
  });
  console.log(table(['scenario', 'ours (median/s)', 'rlflx (median/s)', 'ours/theirs', 'rounds'], body));
  console.log('');
  for (const r of rows) {
    console.log(`${r.scenario}: ours   rounds ${r.ours.map(fmtInt).join(', ')}`);
    console.log(`${' '.repeat(r.scenario.length)}  rlflx  rounds ${r.theirs.map(fmtInt).join(', ')}`);
  }
}
