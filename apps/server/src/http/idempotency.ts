import { hash } from 'node:crypto';
import { IDEMPOTENCY_KEY_PATTERN, type NewPet } from '@animal-store/contract';
import type { Request } from 'express';
import { NEW_PET_FIELDS } from '../db/pets/fields.js';
import type { IdempotencyScope, OnceOutcome } from '../db/types.js';
import { AppError } from '../errors/app-error.js';

/**
 * `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header-07, as Stripe practises it) on `POST /v1/pets`.
 * A key is 1 to 255 printable ASCII characters, scoped to the API key that sends it.
 */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

/** Seconds a client is told to wait when its key's first request is still being committed. */
export const IN_USE_RETRY_AFTER_SECONDS = 1;

/** The request's key, or undefined without one; a malformed or repeated header is a 400. */
export function idempotencyKeyOf(req: Request): string | undefined {
  const values = req.headersDistinct[IDEMPOTENCY_KEY_HEADER];
  if (values === undefined) return undefined;
  if (values.length !== 1) throw new AppError('invalid_request', 'Idempotency-Key must be sent once');
  const key = values[0]!;
  if (!IDEMPOTENCY_KEY_PATTERN.test(key))
    throw new AppError('invalid_request', 'Idempotency-Key must be 1 to 255 printable ASCII characters');
  return key;
}

/** The fields every fingerprint lists (those of the first release: name, categoryId, status), absent ones as null. */
const LISTED_ALWAYS = 3;

/**
 * What the request asked for: the validated NewPet's fields (db/pets/fields.ts) in their order, absent ones as null,
 * so two bodies that would create the same pet (whitespace, field order, ignored fields) are the same request, and
 * any difference in what would be created is not. Absent fields after the first {@link LISTED_ALWAYS} are left out at
 * the end: a field added later leaves the fingerprints of requests without it, stored ones included, as they were.
 */
export function fingerprintOf(pet: NewPet): string {
  const values = NEW_PET_FIELDS.map((f) => pet[f.name as keyof NewPet] ?? null);
  let end = values.length;
  while (end > LISTED_ALWAYS && values[end - 1] === null) end--;
  return hash('sha256', JSON.stringify(values.slice(0, end)), 'base64url');
}

/**
 * Requests of this process whose key is being committed: a second one with the same key is answered 409 at once
 * instead of waiting in the same batch. Other replicas are excluded by the database (see db/postgres/writes.ts).
 */
export class KeysInFlight {
  readonly #keys = new Set<string>();

  async run(scope: IdempotencyScope, create: () => Promise<OnceOutcome>): Promise<OnceOutcome> {
    const id = `${scope.lineageId}:${scope.key}`;
    if (this.#keys.has(id)) return { kind: 'in_use' };
    this.#keys.add(id);
    try {
      return await create();
    } finally {
      this.#keys.delete(id);
    }
  }
}

export const keyInUse = () =>
  new AppError(
    'idempotency_key_in_use',
    'A request with this Idempotency-Key is still being processed; retry after Retry-After',
    {
      'Retry-After': String(IN_USE_RETRY_AFTER_SECONDS),
    },
  );

export const keyReused = () =>
  new AppError(
    'idempotency_key_reused',
    'This Idempotency-Key was used with a different request body; use a new key for a new request',
  );
