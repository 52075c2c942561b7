/**
 * Answers whose JSON is already made (a list page, made by the read path: see db/pet-page.ts; a stored idempotent
 * answer), and what is worked out once from it: its length and its ETag.
 *
 * Such a value is frozen, so no answer can alter another's. What is worked out from it lives in a memo the value
 * carries in a hidden (symbol-keyed) property, not in a WeakMap keyed by the value: in Node 20's V8 young WeakMap keys
 * survive every minor GC, which promoted every answer's page (BENCHMARKS.md, third session).
 */
const MEMO = Symbol('animal-store.serialized');

export interface AnswerMemo {
  /** The JSON of the value, and what the answer's headers need from it. */
  entity: { body: string; length?: number; etag?: string };
}

/** `value`, frozen, answered with exactly `body` by the JSON answer (http/respond.ts), not a serialization of its own. */
export function serializedAs<T extends object>(value: T, body: string): Readonly<T> {
  Object.defineProperty(value, MEMO, { value: { entity: { body } } satisfies AnswerMemo });
  return Object.freeze(value);
}

/** The memo of a value made by {@link serializedAs}; undefined for anything else (which may change between answers). */
export function memoOf(value: unknown): AnswerMemo | undefined {
  return typeof value === 'object' && value !== null
    ? (value as Record<symbol, AnswerMemo | undefined>)[MEMO]
    : undefined;
}
