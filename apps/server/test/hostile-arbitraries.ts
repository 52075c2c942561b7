import fc from 'fast-check';
import { expect } from 'vitest';

/**
 * Generators of what a hostile or careless client sends, shared by the /v1 and admin API suites
 * (v1-hostile.test.ts, admin-hostile.test.ts): ids, cursors, limits, names, dates, bodies and headers, mostly wrong,
 * sometimes right, so that a 2xx stays possible and every refusal path is walked.
 */

const base64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

/** A path id: in range or not, not a number, encoded oddly. */
export const pathId = (valid: fc.Arbitrary<number>): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 4, arbitrary: valid.map(String) },
    fc.constantFrom('0', '-1', '01', '1.5', '1e3', '0x10', ' 1', '1 ', '+1', '%00', '%E0%A4%A', 'NaN', '%2e%2e', 'ab'),
    fc.constantFrom('2147483647', '2147483648', '9007199254740991', '9007199254740993', '1'.repeat(40)),
    fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
    fc.string({ maxLength: 12 }).map(encodeURIComponent),
  );

/** A list cursor: canonical, forged (ids out of range, other versions), or not base64url at all. */
export const cursor: fc.Arbitrary<string> = fc.oneof(
  fc.bigInt({ min: -1n, max: 10n ** 20n }).map((id) => base64url(`p1.${id}`)),
  fc.constantFrom('p1.2147483648', 'p1.9007199254740991', 'p1.0', 'p1.01', 'p2.1', 'p1.', 'p1.1e3').map(base64url),
  fc.string({ maxLength: 60 }),
  fc.base64String({ maxLength: 40 }),
);

/** A `limit` query value. */
export const limit: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: -5, max: 205 }).map(String),
  fc.constantFrom('', '1e2', '1.5', '05', ' 5', '0x10', '%ff', 'null', '9'.repeat(30)),
);

/** Query strings of a list: limit, cursor, status, repeated and unknown parameters. */
export const listQuery: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      limit.map((v) => `limit=${encodeURIComponent(v)}`),
      cursor.map((v) => `cursor=${encodeURIComponent(v)}`),
      fc.constantFrom('status=sold', 'status=', 'status=x', 'limit[]=1', 'cursor[a]=b', 'a=%', '%', '=', '&&'),
    ),
    { maxLength: 4 },
  )
  .map((parts) => (parts.length ? `?${parts.join('&')}` : ''));

/** A field's values: `ok` what its rule accepts (none: the field is only ever sent wrong), `bad` what it refuses. */
export interface Field {
  ok?: fc.Arbitrary<unknown>;
  bad: fc.Arbitrary<unknown>;
}

/** A name: plain, or with what the name rule refuses (controls, lone surrogates, blanks, length, other types). */
export const name: Field = {
  ok: fc.stringMatching(/^[A-Za-z0-9 ]{0,15}[A-Za-z]$/),
  bad: fc.oneof(
    fc.string({ minLength: 1, maxLength: 20 }),
    fc.string({ unit: 'binary', maxLength: 20 }),
    fc.constantFrom('a\u0000b', 'red\u001b[31m', 'two\nlines', 'del\u007f', 'c1\u0085', 'x\ud800y', ' \t ', ''),
    fc.integer({ min: 199, max: 300 }).map((n) => 'x'.repeat(n)),
    fc.constantFrom(null, 1, true, ['x'], { a: 1 }),
  ),
};

/** A date-time: a future RFC 3339 instant, or near it (impossible offsets, days, leap seconds, other forms). */
export const dateTime: Field = {
  ok: fc
    .date({ min: new Date('2031-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
    .map((d) => d.toISOString()),
  bad: fc.oneof(
    fc
      .date({ min: new Date('1969-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
      .map((d) => d.toISOString()),
    fc
      .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 99 }), fc.boolean())
      .map(([sign, h, m, colon]) => {
        const two = (n: number) => String(n).padStart(2, '0');
        return `2030-01-01T00:00:00${sign}${two(h)}${colon ? ':' : ''}${two(m)}`;
      }),
    fc.constantFrom('2030-02-30T00:00:00Z', '2030-01-01T23:59:60Z', '2030-01-01', '10000-01-01T00:00:00Z', 'soon'),
    fc.constantFrom('9999-12-31T23:59:59-01:00', '0000-01-01T00:00:00+01:00', '2030-01-01T24:00:00Z'),
    fc.constantFrom(0, 1e20, true, {}),
  ),
};

/** A positive integer field: small, or out of range, fractional, unsafe, another type. */
export const integerField: Field = {
  ok: fc.integer({ min: 1, max: 1000 }),
  bad: fc.oneof(
    fc.integer({ min: -10, max: 2_000_000 }),
    fc.constantFrom(0, -1, 1.5, 2 ** 31, 2 ** 53, 2 ** 53 + 2, 1e300, '5', null, [], {}),
  ),
};

/**
 * An object of `fields`: acceptable values for some of them, then (mostly) one field given a bad value, and sometimes
 * an unknown field, so that each refusal is reached alone and some objects are accepted.
 */
export const objectOf = (
  fields: Record<string, Field>,
  requiredKeys: string[] = [],
): fc.Arbitrary<Record<string, unknown>> => {
  const ok = Object.fromEntries(
    Object.entries(fields).flatMap(([key, field]) => (field.ok ? [[key, field.ok] as const] : [])),
  );
  const bad = fc
    .constantFrom(...Object.keys(fields))
    .chain((key) => fields[key]!.bad.map((value): [string, unknown] => [key, value]));
  const unknown = fc.tuple(fc.string({ maxLength: 8 }), fc.jsonValue());
  return fc
    .tuple(
      fc.record(ok, { requiredKeys }),
      fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 3, arbitrary: bad }),
      fc.oneof({ weight: 5, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: unknown }),
    )
    .map(([record, wrong, extra]) => ({
      ...record,
      ...(wrong ? { [wrong[0]]: wrong[1] } : {}),
      ...(extra ? { [extra[0]]: extra[1] } : {}),
    }));
};

/** A request body as sent: JSON of `shaped` or of anything, broken JSON, not JSON, nothing. */
export const body = (shaped: fc.Arbitrary<unknown>): fc.Arbitrary<string | undefined> =>
  fc.oneof(
    { weight: 4, arbitrary: shaped.map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: fc.jsonValue().map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
    { weight: 1, arbitrary: fc.constantFrom('{', '{"a":', '[]', 'null', '"x"', '\u0000', '{"a":1}{', undefined) },
  );

/** Mostly JSON (so bodies reach validation), sometimes what the API refuses before reading. */
const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'application/json; charset=utf-16',
      'application/merge-patch+json',
      'text/plain',
      'multipart/form-data; boundary=x',
      'application/x-www-form-urlencoded',
    ),
  },
);

const rarely = <T>(value: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: value });

/** Headers around the body and the request: content types, encodings, ids, conditions. */
export const headers: fc.Arbitrary<Record<string, string>> = fc
  .record({
    'Content-Type': contentType,
    'Content-Encoding': rarely(fc.constantFrom('gzip', 'br', 'identity', 'x-unknown')),
    'Idempotency-Key': rarely(fc.string({ minLength: 1, maxLength: 300 }).filter((v) => /^[\x20-\x7e]*$/.test(v))),
    'If-None-Match': rarely(fc.constantFrom('*', '"x"', 'W/"x"', 'garbage')),
    'X-Request-Id': rarely(fc.string({ maxLength: 200 }).filter((v) => /^[\x20-\x7e]*$/.test(v))),
    Accept: rarely(fc.constantFrom('application/xml', '*/*', 'text/html', '')),
  })
  .map((all) => Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined)) as Record<string, string>);

/** Every answer: under 500, and a 4xx is an Error body whose status is the answer's and whose message shows no internals. */
export async function expectNoServerError(res: Response, where: string): Promise<void> {
  const text = await res.text();
  const context = `${where} -> ${res.status} ${text.slice(0, 200)}`;
  expect(res.status, context).toBeLessThan(500);
  if (res.status < 400) return;
  expect(res.headers.get('content-type'), context).toMatch(/^application\/json/);
  const error = JSON.parse(text) as { code: unknown; status: unknown; message: unknown };
  expect(error.status, context).toBe(res.status);
  expect(typeof error.code, context).toBe('string');
  expect(String(error.message), context).not.toMatch(/\bat \S+:\d+|node_modules|prisma|express|zod|postgres|sqlite/i);
}

/** One request of a hostile suite: a method, a path (with its query) and a raw body or none. */
export interface HostileCall {
  method: string;
  path: string;
  body: string | undefined;
}

/** A route of a hostile suite: its method, hostile paths and bodies, and how often it is drawn (1 unless given). */
export type HostileRoute = [
  method: string,
  path: fc.Arbitrary<string>,
  body: fc.Arbitrary<string | undefined>,
  weight?: number,
];

/** Calls drawn from a table of routes. */
export function hostileCalls(routes: HostileRoute[]): fc.Arbitrary<HostileCall> {
  return fc.oneof(
    ...routes.map(([method, path, body, weight = 1]) => ({
      weight,
      arbitrary: fc.record({ method: fc.constant(method), path, body }),
    })),
  );
}

/**
 * Sends one hostile call and holds the suites' rule: never a 5xx or a reset, a 4xx with an Error body
 * (expectNoServerError), and a refused call leaves the state `snapshot` reads (every pet, every key) as it was.
 */
export async function expectHostileCallHarmless(
  url: string,
  call: HostileCall,
  sentHeaders: Record<string, string>,
  snapshot: () => Promise<string>,
): Promise<void> {
  const before = await snapshot();
  const where = `${call.method} ${url} ${JSON.stringify(sentHeaders)} ${call.body ?? ''}`;
  const res = await fetch(url, {
    method: call.method,
    headers: sentHeaders,
    ...(call.body === undefined ? {} : { body: call.body }),
  });
  const status = res.status;
  await expectNoServerError(res, where);
  if (status >= 400) expect(await snapshot(), where).toBe(before);
}
