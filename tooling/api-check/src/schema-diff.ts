/**
 * What one JSON Schema (OpenAPI 3.0 dialect, `$ref`s into the same document) accepts that another does not, for the
 * keywords our contract emits: type (+ nullable), enum/const, numeric and length bounds, pattern, format, items,
 * properties, required, additionalProperties; composition keywords (allOf/anyOf/oneOf/not) are compared as written.
 *
 * `lost(a, b)` lists the ways in which `b` is narrower than `a`. Requests check lost(old, new): a request the old
 * document allowed must stay valid. Responses check lost(new, old): whatever the new document may answer, the old one
 * promised. A property only `b` describes is `property-undescribed`: a removed response field, or (requests) a new
 * optional field, which the caller tells apart.
 */

export type Schema = Record<string, unknown>;

export interface Narrowing {
  /** A stable name: `type`, `enum-value`, `maximum`, `max-length`, `property-required`, `property-undescribed`... */
  rule: string;
  /** JSON-pointer-like place inside the schema (`/name`, `/items/status`). */
  at: string;
  detail: string;
}

export type Resolve = (schema: unknown) => Schema;

/** `$ref: '#/components/schemas/X'` -> the schema it names (recursively), else the schema itself. */
export function resolver(document: Schema): Resolve {
  const resolve: Resolve = (schema) => {
    let current = (schema ?? {}) as Schema;
    for (let hops = 0; typeof current.$ref === 'string'; hops++) {
      if (hops > 32) throw new Error(`$ref loop at ${current.$ref}`);
      const path = current.$ref.replace(/^#\//, '').split('/');
      current = path.reduce<unknown>((node, key) => (node as Schema | undefined)?.[key], document) as Schema;
      if (!current) throw new Error(`unresolved $ref ${String(schema && (schema as Schema).$ref)}`);
    }
    return current;
  };
  return resolve;
}

const COMPOSITION = ['allOf', 'anyOf', 'oneOf', 'not'] as const;

/** The ways `b` (resolved with `resolveB`) accepts less than `a`. */
export function lost(
  a: unknown,
  b: unknown,
  resolveA: Resolve,
  resolveB: Resolve,
  names: Names = { a: 'a', b: 'b' },
): Narrowing[] {
  const found: Narrowing[] = [];
  const walk = (left: unknown, right: unknown, where: string, depth: number) => {
    if (depth > 64) return;
    const x = resolveA(left);
    const y = resolveB(right);
    const add = (rule: string, detail: string) => found.push({ rule, at: where || '/', detail });
    for (const keyword of COMPOSITION)
      if (JSON.stringify(x[keyword]) !== JSON.stringify(y[keyword])) add('composition', `${keyword} differs`);
    compareTypes(x, y, add, names);
    compareValues(x, y, add, names);
    compareBounds(x, y, add, names);
    if (x.items !== undefined || y.items !== undefined) walk(x.items, y.items, `${where}/items`, depth + 1);
    compareObjects(x, y, where, add, names, (l, r, w) => walk(l, r, w, depth + 1));
  };
  walk(a, b, '', 0);
  return found;
}

type Add = (rule: string, detail: string) => void;
/** What the details call the two schemas (`old`, `new`). */
export type Names = { a: string; b: string };

function typesOf(schema: Schema): Set<string> | undefined {
  const declared = schema.type;
  if (declared === undefined) return undefined;
  const types = new Set(Array.isArray(declared) ? (declared as string[]) : [declared as string]);
  if (schema.nullable === true) types.add('null');
  return types;
}

function compareTypes(x: Schema, y: Schema, add: Add, { a, b }: Names) {
  const left = typesOf(x);
  const right = typesOf(y);
  if (!right) return;
  if (!left) return add('type', `any type in ${a}, ${[...right].join('|')} in ${b}`);
  for (const type of left) {
    const allowed = right.has(type) || (type === 'integer' && right.has('number'));
    if (!allowed) add(type === 'null' ? 'nullable' : 'type', `${type} in ${a}, not in ${b} (${[...right].join('|')})`);
  }
}

function valuesOf(schema: Schema): unknown[] | undefined {
  if (Array.isArray(schema.enum)) return schema.enum as unknown[];
  if ('const' in schema) return [schema.const];
  return undefined;
}

function compareValues(x: Schema, y: Schema, add: Add, { a, b }: Names) {
  const right = valuesOf(y);
  if (!right) return;
  const left = valuesOf(x);
  if (!left) return add('enum', `any value in ${a}, only ${JSON.stringify(right)} in ${b}`);
  const kept = new Set(right.map((value) => JSON.stringify(value)));
  for (const value of left)
    if (!kept.has(JSON.stringify(value))) add('enum-value', `${JSON.stringify(value)} in ${a}, not in ${b}`);
}

/** [lowest, exclusive] and [highest, exclusive] of a schema, for OpenAPI 3.0 and 3.1 spellings alike. */
function bound(schema: Schema, side: 'minimum' | 'maximum'): [number, boolean] | undefined {
  const exclusiveKey = side === 'minimum' ? 'exclusiveMinimum' : 'exclusiveMaximum';
  const exclusive = schema[exclusiveKey];
  if (typeof exclusive === 'number') return [exclusive, true];
  if (typeof schema[side] === 'number') return [schema[side], exclusive === true];
  return undefined;
}

function compareBounds(x: Schema, y: Schema, add: Add, { a, b }: Names) {
  for (const side of ['minimum', 'maximum'] as const) {
    const right = bound(y, side);
    if (!right) continue;
    const left = bound(x, side);
    const sign = side === 'minimum' ? 1 : -1;
    const narrower = !left || sign * (right[0] - left[0]) > 0 || (right[0] === left[0] && right[1] && !left[1]);
    if (narrower)
      add(side, `${side}: ${a} ${left ? left[0] : 'none'}, ${b} ${right[0]}${right[1] ? ' (exclusive)' : ''}`);
  }
  for (const [key, rule, sign] of [
    ['minLength', 'min-length', 1],
    ['maxLength', 'max-length', -1],
    ['minItems', 'min-items', 1],
    ['maxItems', 'max-items', -1],
  ] as const) {
    const right = y[key];
    if (typeof right !== 'number') continue;
    const left = x[key];
    if (typeof left !== 'number' || sign * (right - left) > 0)
      add(rule, `${key}: ${a} ${typeof left === 'number' ? left : 'none'}, ${b} ${right}`);
  }
  for (const key of ['pattern', 'format'] as const)
    if (y[key] !== undefined && y[key] !== x[key])
      add(key, `${key}: ${a} ${JSON.stringify(x[key] ?? 'none')}, ${b} ${JSON.stringify(y[key])}`);
}

function compareObjects(
  x: Schema,
  y: Schema,
  where: string,
  add: Add,
  { a, b }: Names,
  walk: (l: unknown, r: unknown, w: string) => void,
) {
  const left = (x.properties ?? {}) as Record<string, unknown>;
  const right = (y.properties ?? {}) as Record<string, unknown>;
  const leftRequired = new Set((x.required ?? []) as string[]);
  for (const name of (y.required ?? []) as string[])
    if (!leftRequired.has(name)) add('property-required', `${name} required in ${b}, optional in ${a}`);
  for (const [name, schema] of Object.entries(right)) {
    if (name in left) walk(left[name], schema, `${where}/${name}`);
    else if (x.additionalProperties === false) continue;
    else add('property-undescribed', `${name} described in ${b} only`);
  }
  for (const [name, schema] of Object.entries(left)) {
    if (name in right) continue;
    if (y.additionalProperties === false) add('property-closed', `${name} allowed in ${a}, not in ${b}`);
    else if (y.additionalProperties !== undefined && y.additionalProperties !== true)
      walk(schema, y.additionalProperties, `${where}/${name}`);
  }
}
