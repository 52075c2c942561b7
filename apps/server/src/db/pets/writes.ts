import type { NewPet, Pet } from '@animal-store/contract';
import type { Batches } from '../batches.js';
import type { IdempotencyScope, OnceOutcome, StoredAnswer } from '../types.js';
import type { PetWrites } from './store.js';

/** What both drivers' writers take (sqlite/writes.ts, postgres/writes.ts). */
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

/** One create of a batch: the pet, and under which key when it is idempotent. */
export type CreateItem = { pet: NewPet; scope?: IdempotencyScope | undefined };
export type CreateOutcome = OnceOutcome | { kind: 'plain'; pet: Pet };

/**
 * The answer stored with an idempotent create of `pet`, replayed byte for byte: its JSON (rows.ts builds a Pet in the
 * JSON's order; PostgreSQL's batch stores the same with postgres/sql.ts `petJsonSql`).
 */
export const answerOf = (pet: Pet, prefix: string): StoredAnswer => ({
  status: 201,
  location: `${prefix}${pet.id}`,
  body: JSON.stringify(pet),
});

/** Creates through a driver's group commit; `pending` is what else must finish before the connection closes. */
export function petWrites(
  { submit, idle }: Batches<CreateItem, CreateOutcome>,
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
export function purgeClock(every: number, now: () => number) {
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
