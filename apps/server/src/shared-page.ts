/**
 * Pages that several answers share (a cached SQLite page, a PostgreSQL read shared by a batch), and what is worked out
 * once from them: the cut to the requested limit, and the JSON body, its length and its ETag.
 *
 * A shared page is frozen, records and array, so no answer can alter another's. What is worked out from it lives in a
 * memo the page carries in a hidden (symbol-keyed) property, not in a WeakMap keyed by the page: in Node 20's V8 young
 * WeakMap keys survive every minor GC, which promoted every answer's page (BENCHMARKS.md, third session).
 */
const MEMO = Symbol('animal-store.shared-page');

export interface PageMemo {
  /** The first `limit` records, itself a shared page. */
  cut?: { limit: number; page: readonly object[] };
  /** The JSON of the page, and what the answer's headers need from it. */
  entity?: { body: string; length?: number; etag?: string };
}

/** Freezes `records` and the array, and gives the page its memo. The records must be flat (no nested objects). */
export function sharedPage<T extends object>(records: T[]): readonly T[] {
  for (const record of records) Object.freeze(record);
  Object.defineProperty(records, MEMO, { value: {} satisfies PageMemo });
  return Object.freeze(records);
}

/**
 * A frozen record answered with exactly `body` (a stored idempotent answer): the JSON answer sends these bytes, not a
 * serialization of its own.
 */
export function serializedAs<T extends object>(record: T, body: string): Readonly<T> {
  Object.defineProperty(record, MEMO, { value: { entity: { body } } satisfies PageMemo });
  return Object.freeze(record);
}

/**
 * The memo of a page made by {@link sharedPage} or a record made by {@link serializedAs}; undefined for anything else
 * (which may change between answers).
 */
export function memoOf(value: unknown): PageMemo | undefined {
  return typeof value === 'object' && value !== null
    ? (value as Record<symbol, PageMemo | undefined>)[MEMO]
    : undefined;
}
