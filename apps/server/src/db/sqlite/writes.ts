import type { Pet } from '@animal-store/contract';
import type BetterSqlite3 from 'better-sqlite3';
import { batches, type Settled } from '../batches.js';
import { createdPet, insertValues } from '../pets/rows.js';
import type { PetWrites } from '../pets/store.js';
import {
  answerOf,
  petWrites,
  purgeClock,
  type CreateItem,
  type CreateOutcome,
  type PetWritesOptions,
} from '../pets/writes.js';
import { FIND_RECORD_SQL, INSERT_PET_SQL, INSERT_RECORD_SQL, PURGE_SQL } from './sql.js';

/**
 * SQLite: a writer connection with statements prepared once. A batch is one `BEGIN IMMEDIATE … COMMIT` (WAL,
 * `synchronous=FULL`: one fsync for all). Its members run one after another without savepoints, which cost more than
 * the rare refusal they serve; only when one throws is the whole transaction rolled back and the batch run again with
 * each member in a savepoint, so the one that fails is undone alone and the others commit
 * (docs/architecture.md#group-commit). `onCommit` is told synchronously, after the commit and before anything else
 * runs, which pets it made (the page cache drops the pages they enter). Expired idempotency records are deleted in
 * bounded steps inside a batch's transaction, so no sweep ever holds the writer.
 */
export function sqlitePetWrites(
  db: BetterSqlite3.Database,
  options: PetWritesOptions & { onCommit?: (pets: readonly Pet[]) => void },
): PetWrites {
  db.pragma('synchronous = FULL');
  const batch = refusalsAlone(db, createMember(db), batchStart(db, options));
  const commits = batches<CreateItem, CreateOutcome>(
    async (items) => {
      const results = batch(items);
      const made: Pet[] = [];
      for (const r of results)
        if (r.ok && (r.value.kind === 'plain' || r.value.kind === 'created')) made.push(r.value.pet);
      if (made.length > 0) options.onCommit?.(made);
      return results;
    },
    {
      maxBatch: options.maxBatch ?? 128,
      maxInFlight: 1,
      operation: {
        system: 'sqlite',
        operation: 'INSERT',
        collection: 'pets',
        query: INSERT_PET_SQL,
        namespace: 'main',
      },
    },
  );
  return petWrites(commits);
}

type Member = (item: CreateItem, expiresAt: string) => CreateOutcome;

/** One create inside a batch's transaction: the key's stored answer if it has one, else the pet and its record. */
function createMember(db: BetterSqlite3.Database): Member {
  const insertPet = db.prepare<unknown[]>(INSERT_PET_SQL).safeIntegers(true);
  const findRecord = db.prepare<
    [number, string],
    { fingerprint: string; status: number; location: string; body: string }
  >(FIND_RECORD_SQL);
  const insertRecord = db.prepare<[number, string, string, bigint, number, string, string, string]>(INSERT_RECORD_SQL);
  return ({ pet, scope }, expiresAt) => {
    if (scope) {
      const stored = findRecord.get(scope.lineageId, scope.key);
      if (stored)
        return {
          kind: 'stored',
          fingerprint: stored.fingerprint,
          answer: { status: stored.status, location: stored.location, body: stored.body },
        };
    }
    const id = insertPet.run(...insertValues(pet, BigInt)).lastInsertRowid as bigint;
    const created = createdPet(id, pet);
    if (!scope) return { kind: 'plain', pet: created };
    const answer = answerOf(created, scope.locationPrefix);
    insertRecord.run(
      scope.lineageId,
      scope.key,
      scope.fingerprint,
      id,
      answer.status,
      answer.location,
      answer.body,
      expiresAt,
    );
    return { kind: 'created', pet: created, answer };
  };
}

/** The start of a batch's transaction: a bounded purge step when one is due; returns its records' expiry. */
function batchStart(db: BetterSqlite3.Database, options: PetWritesOptions): () => string {
  const now = options.now ?? Date.now;
  const purgeRows = options.purgeRows ?? 500;
  const purge = db.prepare<[string, number]>(PURGE_SQL);
  const purgeDue = purgeClock(options.purgeEveryMs ?? 60_000, now);
  return () => {
    const at = now();
    if (purgeDue.due() && purge.run(new Date(at).toISOString(), purgeRows).changes >= purgeRows) purgeDue.again();
    return new Date(at + options.ttlMs).toISOString();
  };
}

/**
 * A batch in one `BEGIN IMMEDIATE` transaction, its members together; after a refused member (rolled back as a whole:
 * nothing of the batch is left) again, each member in a savepoint of its own (better-sqlite3 nests a transaction
 * function as one), so only that one fails. Any other error (the lock not taken in time, the commit failing) is the
 * batch's own and is not tried twice.
 */
function refusalsAlone(
  db: BetterSqlite3.Database,
  member: Member,
  begin: () => string,
): (items: readonly CreateItem[]) => Settled<CreateOutcome>[] {
  const refused = new Error('a member of the batch was refused');
  /** The batch in one transaction, each member run by `one`; `refusal` says what a member's error comes to. */
  const batchOf = (one: Member, refusal: (error: unknown) => Settled<CreateOutcome>) =>
    db.transaction((items: readonly CreateItem[]): Settled<CreateOutcome>[] => {
      const expiresAt = begin();
      return items.map((item) => {
        try {
          return { ok: true, value: one(item, expiresAt) };
        } catch (error) {
          return refusal(error);
        }
      });
    });
  const together = batchOf(member, () => {
    throw refused; // rolls the batch back
  });
  const eachAlone = batchOf(db.transaction(member), (error) => ({ ok: false, error }));
  return (items) => {
    try {
      return together.immediate(items);
    } catch (error) {
      if (error !== refused) throw error;
      return eachAlone.immediate(items);
    }
  };
}
