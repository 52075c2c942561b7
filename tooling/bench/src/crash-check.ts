/**
 * The crash check: creates in flight, the server killed with SIGKILL, started again on the same database; every create
 * that was answered 201 must be there with its id and values, and its Idempotency-Key must replay the same answer.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import type { BenchDatabase } from './databases.js';
import type { RunningServer } from './servers.js';

export interface CrashResult {
  /** Creates answered 201 before the kill. */
  answered: number;
  /** Of those, pets missing or different after the restart (must be 0). */
  missing: number;
  /** Keys replayed after the restart, and those whose replay differed from the first answer (must be 0). */
  replayed: number;
  replayMismatches: number;
  /** Requests cut by the kill (no answer). */
  cut: number;
}

type Answered = { id: number; body: string; key: string; sent: string };

/** Sends creates on `concurrency` loops until `killAfterMs`, then SIGKILLs the server; restarts it with `restart`. */
export async function crashCheck(
  db: BenchDatabase,
  server: RunningServer,
  restart: () => Promise<RunningServer>,
  opts: { concurrency: number; killAfterMs: number },
): Promise<CrashResult> {
  const { answered, cut } = await createUntilKilled(db, server, opts);
  const again = await restart();
  try {
    return { ...(await verify(db, again, answered)), answered: answered.length, cut };
  } finally {
    await again.stop();
  }
}

async function createUntilKilled(
  db: BenchDatabase,
  server: RunningServer,
  opts: { concurrency: number; killAfterMs: number },
): Promise<{ answered: Answered[]; cut: number }> {
  const answered: Answered[] = [];
  let cut = 0;
  let stop = false;
  const loop = async (n: number) => {
    for (let i = 0; !stop; i++) {
      const key = randomUUID();
      const sent = JSON.stringify({ name: `crash-${n}-${i}`, categoryId: (i % 10) + 1, status: 'pending' });
      try {
        const res = await postPet(server, db.key, key, sent);
        const body = await res.text();
        if (res.status === 201) answered.push({ id: (JSON.parse(body) as { id: number }).id, body, key, sent });
      } catch {
        cut++;
        return;
      }
    }
  };
  const loops = Array.from({ length: opts.concurrency }, (_, n) => loop(n));
  await sleep(opts.killAfterMs);
  server.child.kill('SIGKILL');
  stop = true;
  await Promise.all(loops);
  await new Promise<void>((resolve) =>
    server.child.exitCode !== null || server.child.signalCode !== null
      ? resolve()
      : server.child.once('exit', () => resolve()),
  );
  return { answered, cut };
}

const postPet = (server: RunningServer, apiKey: string, idempotencyKey: string, body: string) =>
  fetch(`${server.origin}/v1/pets`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`,
      'content-type': 'application/json',
      'idempotency-key': idempotencyKey,
    },
    body,
  });

/** Every answered pet is there as answered; a sample of the keys replays the same bytes. */
async function verify(
  db: BenchDatabase,
  again: RunningServer,
  answered: Answered[],
): Promise<Pick<CrashResult, 'missing' | 'replayed' | 'replayMismatches'>> {
  const found = await petsById(
    db.url,
    answered.map((a) => a.id),
  );
  let missing = 0;
  for (const a of answered) {
    const row = found.get(a.id);
    const want = JSON.parse(a.body) as { name: string; categoryId: number; status?: string };
    if (!row || row.name !== want.name || row.categoryId !== want.categoryId || row.status !== (want.status ?? null))
      missing++;
  }
  // Replays of a sample: the record committed with its pet, so the same key gives the same bytes.
  const sample = answered.filter((_, i) => i % Math.max(1, Math.floor(answered.length / 50)) === 0);
  let replayMismatches = 0;
  for (const a of sample) {
    const res = await postPet(again, db.key, a.key, a.sent);
    const body = await res.text();
    if (res.status !== 201 || body !== a.body || res.headers.get('idempotent-replayed') !== 'true') replayMismatches++;
  }
  return { missing, replayed: sample.length, replayMismatches };
}

type Row = { name: string; categoryId: number; status: string | null };

async function petsById(url: string, ids: number[]): Promise<Map<number, Row>> {
  const out = new Map<number, Row>();
  if (url.startsWith('file:')) {
    const db = new BetterSqlite3(url.slice('file:'.length), { readonly: true });
    try {
      const get = db.prepare<[number], Row & { id: number }>(
        'SELECT "id", "name", "categoryId", "status" FROM "Pet" WHERE "id" = ?',
      );
      for (const id of ids) {
        const row = get.get(id);
        if (row) out.set(id, row);
      }
    } finally {
      db.close();
    }
    return out;
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; name: string; categoryId: string; status: string | null }>(
      'SELECT "id"::text, "name", "categoryId"::text AS "categoryId", "status" FROM "Pet" WHERE "id" = ANY($1::int8[])',
      [ids.map(String)],
    );
    for (const r of rows) out.set(Number(r.id), { name: r.name, categoryId: Number(r.categoryId), status: r.status });
  } finally {
    await client.end();
  }
  return out;
}
