import type { PetStore, ReadStats } from '../types.js';

/** A driver's list and get (prepared SQL: sqlite/reads.ts, postgres/reads.ts), with counters for /metrics. */
export type PetReads = Pick<PetStore, 'list' | 'get'> & { stats(): ReadStats };

/** A driver's creates through group commit (sqlite/writes.ts, postgres/writes.ts); each answered after its commit. */
export type PetWrites = Pick<PetStore, 'create' | 'createOnce'> & {
  /** Resolves once no batch is queued or committing (and no purge is running): the connection may close. */
  closed(): Promise<void>;
};

/** The pet store of one driver: its reads answer list and get, its writes create. */
export function petStore(reads: PetReads, writes: PetWrites): PetStore {
  return { list: reads.list, get: reads.get, create: writes.create, createOnce: writes.createOnce };
}
