import type pg from 'pg';
import { batches, type Settled } from '../batches.js';
import { NEW_PET_FIELDS } from '../pets/fields.js';
import { createdPet, insertValues } from '../pets/rows.js';
import type { PetWrites } from '../pets/store.js';
import type { StoredAnswer } from '../types.js';
import { petWrites, purgeClock, type CreateItem, type CreateOutcome, type PetWritesOptions } from '../pets/writes.js';
import { CREATE_BATCH_SQL, FIND_RECORDS_SQL, PURGE_SQL } from './sql.js';
import { postgresOperation } from '../../telemetry/db-telemetry.js';

type BatchRow = { id: string; free: boolean; created: boolean } & {
  [K in keyof StoredAnswer]: StoredAnswer[K] | null;
};
type RecordRow = {
  lineageId: number;
  key: string;
  fingerprint: string;
  status: number;
  location: string;
  body: string;
};

/**
 * One batch as ONE statement ({@link CREATE_BATCH_SQL}): the outcome of each member, in order. A keyed member whose
 * record could not go in because another request committed that key first gets that request's stored answer (one more
 * round trip, only on this path).
 */
async function createBatch(pool: pg.Pool, items: readonly CreateItem[], ttlMs: number): Promise<CreateOutcome[]> {
  const column = <T>(f: (item: CreateItem) => T) => items.map(f);
  // int64 values as decimal text: exact for every int64.
  const values = items.map((i) => insertValues(i.pet, String));
  const { rows } = await pool.query<BatchRow>(CREATE_BATCH_SQL, [
    ...NEW_PET_FIELDS.map((_, c) => values.map((row) => row[c])),
    column((i) => i.scope?.lineageId ?? null),
    column((i) => i.scope?.key ?? null),
    column((i) => i.scope?.fingerprint ?? null),
    column((i) => i.scope?.locationPrefix ?? null),
    ttlMs,
  ]);
  const outcomes: Array<CreateOutcome | undefined> = [];
  const conflicts: number[] = [];
  items.forEach((item, i) => {
    const row = rows[i];
    if (!row) throw new Error('the batch statement returned fewer rows than it was given');
    if (!item.scope) outcomes.push({ kind: 'plain', pet: createdPet(row.id, item.pet) });
    else if (!row.free) outcomes.push({ kind: 'in_use' });
    else if (row.created) {
      // The answer as stored, made by PostgreSQL (postgres/sql.ts petJsonSql): the first answer is the replay's bytes.
      const answer = { status: row.status!, location: row.location!, body: row.body! };
      outcomes.push({ kind: 'created', pet: createdPet(row.id, item.pet), answer });
    } else {
      outcomes.push(undefined);
      conflicts.push(i);
    }
  });
  if (conflicts.length > 0) {
    const scopes = conflicts.map((i) => items[i]!.scope!);
    const found = await pool.query<RecordRow>(FIND_RECORDS_SQL, [
      scopes.map((s) => s.lineageId),
      scopes.map((s) => s.key),
    ]);
    const byKey = new Map(found.rows.map((r) => [`${r.lineageId}:${r.key}`, r]));
    for (const i of conflicts) {
      const scope = items[i]!.scope!;
      const r = byKey.get(`${scope.lineageId}:${scope.key}`);
      // Gone between the two statements (purged): the client's retry creates it anew.
      outcomes[i] = r
        ? {
            kind: 'stored',
            fingerprint: r.fingerprint,
            answer: { status: r.status, location: r.location, body: r.body },
          }
        : { kind: 'in_use' };
    }
  }
  return outcomes as CreateOutcome[];
}

/**
 * PostgreSQL: a batch is ONE statement (one round trip, one commit): ids drawn from the sequence, the idempotency
 * records inserted (`ON CONFLICT DO NOTHING`), and only the pets whose record went in (or that have no key), so a pet
 * and its record commit together or not at all. A keyed member first takes a transaction-scoped advisory lock on its
 * key without waiting: a key some other transaction (another replica) is committing is `in_use`, never a second pet.
 * Unnamed statements and no session state, so it runs behind PgBouncer in transaction mode. When the statement fails
 * (e.g. one member's value refused by the database), each member is sent again alone, so only that one fails.
 */
export function postgresPetWrites(
  pool: pg.Pool,
  options: PetWritesOptions & { onPurgeError?: (err: unknown) => void },
): PetWrites {
  const now = options.now ?? Date.now;
  const purgeRows = options.purgeRows ?? 500;
  const purgeDue = purgeClock(options.purgeEveryMs ?? 60_000, now);
  let purging: Promise<void> = Promise.resolve();
  // Not awaited by the batch: a purge is its own statement, bounded, and never holds a create.
  const runPurge = () => {
    purging = pool.query(PURGE_SQL, [purgeRows]).then(
      (res) => {
        if ((res.rowCount ?? 0) >= purgeRows) purgeDue.again();
      },
      (err: unknown) => options.onPurgeError?.(err),
    );
  };
  const statement = (items: readonly CreateItem[]) => createBatch(pool, items, options.ttlMs);

  const commits = batches<CreateItem, CreateOutcome>(
    async (items) => {
      if (purgeDue.due()) runPurge();
      try {
        return (await statement(items)).map((value) => ({ ok: true, value }));
      } catch (error) {
        if (items.length === 1) return [{ ok: false, error }];
        // One member may be what the database refused: each alone, so it fails alone.
        return Promise.all(
          items.map((item) =>
            statement([item]).then(
              ([value]): Settled<CreateOutcome> => ({ ok: true, value: value! }),
              (err: unknown): Settled<CreateOutcome> => ({ ok: false, error: err }),
            ),
          ),
        );
      }
    },
    // Two batches in flight: one is being committed while the next one fills.
    {
      maxBatch: options.maxBatch ?? 128,
      maxInFlight: 2,
      operation: postgresOperation(pool, 'INSERT', CREATE_BATCH_SQL),
    },
  );
  return petWrites(commits, () => purging);
}
