/**
 * Answers whose JSON is made before the route returns (a list page made by the read path, see db/pets/page.ts; a
 * stored idempotent answer), and what is worked out once from it: its length and its ETag (lean-json.ts reads them).
 *
 * Rule relied on: a value made here is frozen, so no answer can alter another's, and its body is exactly what the
 * route means to send. The memo lives in a hidden (symbol-keyed) property of the value, not in a WeakMap keyed by it:
 * in Node 20's V8, young WeakMap keys survive every minor GC, which promoted every answer's page to the old generation
 * (docs/architecture.md#fast-paths).
 */
const MEMO = Symbol('animal-store.serialized');

export interface AnswerMemo {
  /** The JSON of the value, and what the answer's headers need from it. */
  entity: { body: string; length?: number; etag?: string };
}

/** Type-level only: the body type a value made by {@link serializedAs} answers as. Never set at run time. */
declare const ANSWERS_AS: unique symbol;
export interface SerializedAs<T> {
  readonly [ANSWERS_AS]?: T;
}

/**
 * `value`, frozen, answered with exactly `body` by the JSON answer (lean-json.ts), not a serialization of its own.
 * `T` is what that JSON is, for the route's type: the value itself by default; see {@link asBody} when it differs.
 */
export function serializedAs<V extends object, T = V>(value: V, body: string): Readonly<V> & SerializedAs<T> {
  Object.defineProperty(value, MEMO, { value: { entity: { body } } satisfies AnswerMemo });
  return Object.freeze(value);
}

/**
 * A value made by {@link serializedAs} as the route's body of type `T`: the JSON answer sends its given body, so what
 * the value is otherwise (a page holding its JSON) does not matter. The one cast of a pre-serialized body.
 */
export function asBody<T>(value: SerializedAs<T>): T {
  return value as unknown as T;
}

/** The memo of a value made by {@link serializedAs}; undefined for anything else (which may change between answers). */
export function memoOf(value: unknown): AnswerMemo | undefined {
  return typeof value === 'object' && value !== null
    ? (value as Record<symbol, AnswerMemo | undefined>)[MEMO]
    : undefined;
}
