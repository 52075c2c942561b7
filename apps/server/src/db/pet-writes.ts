import type { NewPet, Pet } from '@animal-store/contract';
import type BetterSqlite3 from 'better-sqlite3';
import type pg from 'pg';
import { groupCommit, type GroupCommit, type Settled } from './group-commit.js';
import { petOf } from './pet-rows.js';
import type { IdempotencyScope, OnceOutcome, PetStore, StoredAnswer } from './types.js';

/** Pet creation through group commit (see {@link groupCommit}); every result is answered after its commit. */
export type PetWrites = Pick<PetStore, 'create' | 'createOnce'> & {
  /** Resolves once no batch is queued or committing (and no purge is running): the connection may close. */
  closed(): Promise<void>;
};

export interface PetWritesOptions {
  /** How long an idempotency record is kept at least (ms). */
  ttlMs: number;
  /** Clock (tests). */
  now?: () => number;
  /** Creates per commit at most (default 128). */
  maxBatch?: number;
  /** Expired records are purged in steps of at most this many rows (default 500), at most once per `purgeEveryMs`. */
  purgeRows?: number;
  /** Default 60 000. */
  purgeEveryMs?: number;
}

type Item = { pet: NewPet; scope?: IdempotencyScope | undefined };
type Outcome = OnceOutcome | { kind: 'plain'; pet: Pet };

/**
 * The JSON of a created pet without its leading `{"id":N,`: the database prepends the id it assigns, so the stored
 * body is exactly `JSON.stringify` of the Pet (id first, as {@link petOf} builds it).
 */
function bodyTail(pet: NewPet): string {
  return JSON.stringify({
    name: pet.name,
    categoryId: pet.categoryId,
    ...(pet.status !== undefined ? { status: pet.status } : {}),
  }).slice(1);
}

const answerOf = (id: number | bigint | string, pet: NewPet, prefix: string): StoredAnswer => ({
  status: 201,
  location: `${prefix}${id}`,
  body: `{"id":${id},${bodyTail(pet)}`,
});

function writes(
  { submit, idle }: GroupCommit<Item, Outcome>,
  pending: () => Promise<unknown> = () => Promise.resolve(),
): PetWrites {
  return {
    async closed() {
      await idle();
      await pending();
    },
    async create(pet) {
      const outcome = await submit({ pet });
      if (outcome.kind !== 'plain') throw new Error('a create without a key came back as an idempotent one');
      return outcome.pet;
    },
    async createOnce(pet, scope) {
      const outcome = await submit({ pet, scope });
      if (outcome.kind === 'plain') throw new Error('a create with a key came back without its record');
      return outcome;
    },
  };
}

/** Purges run at most once per `every` ms; `due()` says whether this commit should run one. */
function purgeClock(every: number, now: () => number) {
  let last = now();
  return {
    due(): boolean {
      if (now() - last < every) return false;
      last = now();
      return true;
    },
    /** A step that found a full batch of expired rows: the next commit purges again. */
    again(): void {
      last = -Infinity;
    },
  };
}

/**
 * SQLite: a writer connection of its own with statements prepared once (the profile of a create showed Prisma's
 * per-query work at most of the server's CPU for it). A batch is one `BEGIN IMMEDIATE … COMMIT` (WAL,
 * `synchronous=FULL`: one fsync for all). Its members run one after another without savepoints; only when one throws
 * is the whole transaction rolled back and the batch run again with each member in a savepoint, so the one that fails
 * is undone alone and the others commit. A savepoint per member cost about 10 µs per create in batches of four (two
 * statements, and a copy of each page it touched again), and members are almost never refused. `onCommit` is told synchronously, after
 * the commit and before anything else runs, which pets it made (the page cache drops the pages they enter). Expired
 * idempotency records are deleted in bounded steps inside a batch's transaction, so no sweep ever holds the writer.
 */
export function sqlitePetWrites(
  db: BetterSqlite3.Database,
  options: PetWritesOptions & { onCommit?: (pets: readonly Pet[]) => void },
): PetWrites {
  const now = options.now ?? Date.now;
  db.pragma('synchronous = FULL');
  const insertPet = db
    .prepare<[string, bigint, string | null]>('INSERT INTO "Pet" ("name", "categoryId", "status") VALUES (?, ?, ?)')
    .safeIntegers(true);
  const findRecord = db.prepare<
    [number, string],
    { fingerprint: string; status: number; location: string; body: string }
  >('SELECT "fingerprint", "status", "location", "body" FROM "IdempotencyRecord" WHERE "apiKeyId" = ? AND "key" = ?');
  const insertRecord = db.prepare<[number, string, string, bigint, number, string, string, string]>(
    'INSERT INTO "IdempotencyRecord" ("apiKeyId", "key", "fingerprint", "petId", "status", "location", "body", "expiresAt") VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const purgeRows = options.purgeRows ?? 500;
  const purge = db.prepare<[string, number]>(
    'DELETE FROM "IdempotencyRecord" WHERE rowid IN (SELECT rowid FROM "IdempotencyRecord" WHERE "expiresAt" < ? LIMIT ?)',
  );
  const purgeDue = purgeClock(options.purgeEveryMs ?? 60_000, now);

  const member = (item: Item, expiresAt: string): Outcome => {
    const { pet, scope } = item;
    if (scope) {
      const stored = findRecord.get(scope.apiKeyId, scope.key);
      if (stored)
        return {
          kind: 'stored',
          fingerprint: stored.fingerprint,
          answer: { status: stored.status, location: stored.location, body: stored.body },
        };
    }
    const id = insertPet.run(pet.name, BigInt(pet.categoryId), pet.status ?? null).lastInsertRowid as bigint;
    const created = petOf(Number(id), pet.name, pet.categoryId, pet.status ?? null);
    if (!scope) return { kind: 'plain', pet: created };
    const answer = answerOf(id, pet, scope.locationPrefix);
    insertRecord.run(
      scope.apiKeyId,
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
  const refused = new Error('a member of the batch was refused');
  /** A member in a savepoint of its own (better-sqlite3 nests a transaction function as one). */
  const alone = db.transaction(member);
  /** The purge step, once per batch (run again by the savepoint form after a rollback). */
  const begin = (): string => {
    const at = now();
    if (purgeDue.due() && purge.run(new Date(at).toISOString(), purgeRows).changes >= purgeRows) purgeDue.again();
    return new Date(at + options.ttlMs).toISOString();
  };
  /** The batch in one transaction, each member run by `one`; `refusal` says what a member's error comes to. */
  const batchOf = (one: typeof member, refusal: (error: unknown) => Settled<Outcome>) =>
    db.transaction((items: readonly Item[]): Settled<Outcome>[] => {
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
    throw refused; // rolls the batch back; see `batch`
  });
  const eachAlone = batchOf(alone, (error) => ({ ok: false, error }));
  /**
   * Together; after a refused member (rolled back as a whole: nothing of the batch is left) again, member by member,
   * so only that one fails. Any other error (the lock not taken in time, the commit failing) is the batch's own, as
   * before, and is not tried twice.
   */
  const batch = (items: readonly Item[]): Settled<Outcome>[] => {
    try {
      return together.immediate(items);
    } catch (error) {
      if (error !== refused) throw error;
      return eachAlone.immediate(items);
    }
  };

  const batches = groupCommit<Item, Outcome>(
    async (items) => {
      const results = batch(items);
      const made: Pet[] = [];
      for (const r of results)
        if (r.ok && (r.value.kind === 'plain' || r.value.kind === 'created')) made.push(r.value.pet);
      if (made.length > 0) options.onCommit?.(made);
      return results;
    },
    { maxBatch: options.maxBatch ?? 128, maxInFlight: 1 },
  );
  return writes(batches);
}

/** The Pet id sequence of the PostgreSQL migration (BIGSERIAL). */
const PG_BATCH_SQL = `WITH input AS MATERIALIZED (
  SELECT nextval('"Pet_id_seq"') AS id, t.*,
         t.key IS NULL OR pg_try_advisory_xact_lock(hashtextextended(t.api_key_id::text || ':' || t.key, 14)) AS free
  FROM unnest($1::text[], $2::int8[], $3::text[], $4::int4[], $5::text[], $6::text[], $7::text[], $8::text[]) WITH ORDINALITY
       AS t(name, category_id, status, api_key_id, key, fingerprint, tail, prefix, ord)
),
records AS (
  INSERT INTO "IdempotencyRecord" ("apiKeyId", "key", "fingerprint", "petId", "status", "location", "body", "expiresAt")
  SELECT api_key_id, key, fingerprint, id, 201, prefix || id, '{"id":' || id || ',' || tail,
         timezone('UTC', now()) + $9::float8 * interval '1 millisecond'
  FROM input WHERE key IS NOT NULL AND free
  ON CONFLICT DO NOTHING
  RETURNING "petId"
),
pets AS (
  INSERT INTO "Pet" ("id", "name", "categoryId", "status")
  SELECT id, name, category_id, status FROM input WHERE key IS NULL OR id IN (SELECT "petId" FROM records)
  RETURNING "id"
)
SELECT input.id::text AS id, input.free, pets.id IS NOT NULL AS created
FROM input LEFT JOIN pets ON pets.id = input.id ORDER BY input.ord`;

const PG_FIND_SQL = `SELECT r."apiKeyId", r."key", r."fingerprint", r."status", r."location", r."body"
FROM "IdempotencyRecord" r JOIN unnest($1::int4[], $2::text[]) AS k(api_key_id, key) ON r."apiKeyId" = k.api_key_id AND r."key" = k.key`;

const PG_PURGE_SQL = `DELETE FROM "IdempotencyRecord" WHERE ctid IN (
  SELECT ctid FROM "IdempotencyRecord" WHERE "expiresAt" < timezone('UTC', now()) LIMIT $1 FOR UPDATE SKIP LOCKED)`;

type PgBatchRow = { id: string; free: boolean; created: boolean };
type PgRecordRow = {
  apiKeyId: number;
  key: string;
  fingerprint: string;
  status: number;
  location: string;
  body: string;
};

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
    purging = pool.query(PG_PURGE_SQL, [purgeRows]).then(
      (res) => {
        if ((res.rowCount ?? 0) >= purgeRows) purgeDue.again();
      },
      (err: unknown) => options.onPurgeError?.(err),
    );
  };

  const statement = async (items: readonly Item[]): Promise<Outcome[]> => {
    const column = <T>(f: (item: Item) => T) => items.map(f);
    const { rows } = await pool.query<PgBatchRow>(PG_BATCH_SQL, [
      column((i) => i.pet.name),
      column((i) => String(i.pet.categoryId)),
      column((i) => i.pet.status ?? null),
      column((i) => i.scope?.apiKeyId ?? null),
      column((i) => i.scope?.key ?? null),
      column((i) => i.scope?.fingerprint ?? null),
      column((i) => bodyTail(i.pet)),
      column((i) => i.scope?.locationPrefix ?? null),
      options.ttlMs,
    ]);
    const outcomes: Array<Outcome | undefined> = [];
    const conflicts: number[] = [];
    items.forEach((item, i) => {
      const row = rows[i];
      if (!row) throw new Error('the batch statement returned fewer rows than it was given');
      const pet = () => petOf(Number(row.id), item.pet.name, item.pet.categoryId, item.pet.status ?? null);
      if (!item.scope) outcomes.push({ kind: 'plain', pet: pet() });
      else if (!row.free) outcomes.push({ kind: 'in_use' });
      else if (row.created)
        outcomes.push({ kind: 'created', pet: pet(), answer: answerOf(row.id, item.pet, item.scope.locationPrefix) });
      else {
        outcomes.push(undefined);
        conflicts.push(i);
      }
    });
    if (conflicts.length > 0) {
      // Keys another request committed first: their stored answers (one more round trip, only on this path).
      const scopes = conflicts.map((i) => items[i]!.scope!);
      const found = await pool.query<PgRecordRow>(PG_FIND_SQL, [
        scopes.map((s) => s.apiKeyId),
        scopes.map((s) => s.key),
      ]);
      const byKey = new Map(found.rows.map((r) => [`${r.apiKeyId}:${r.key}`, r]));
      for (const i of conflicts) {
        const scope = items[i]!.scope!;
        const r = byKey.get(`${scope.apiKeyId}:${scope.key}`);
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
    return outcomes as Outcome[];
  };

  const batches = groupCommit<Item, Outcome>(
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
              ([value]): Settled<Outcome> => ({ ok: true, value: value! }),
              (err: unknown): Settled<Outcome> => ({ ok: false, error: err }),
            ),
          ),
        );
      }
    },
    // Two batches in flight: one is being committed while the next one fills.
    { maxBatch: options.maxBatch ?? 128, maxInFlight: 2 },
  );
  return writes(batches, () => purging);
}
