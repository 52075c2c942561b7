import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ListApiKeysQuery, MAX_KEY_ID } from './admin-schemas.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { ListPetsQuery, MAX_SAFE_ID } from './schemas.js';

/** Both lists' cursors: one rule, each bounded by its ids' range (int64 kept exact for pets, int32 for keys). */
const LISTS = [
  { what: '/v1/pets', max: MAX_SAFE_ID, accepts: (cursor: unknown) => ListPetsQuery.safeParse({ cursor }).success },
  {
    what: '/admin/v1/keys',
    max: MAX_KEY_ID,
    accepts: (cursor: unknown) => ListApiKeysQuery.safeParse({ cursor }).success,
  },
];

const plainCursor = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

describe.each(LISTS)('the cursor rule of $what', ({ max, accepts }) => {
  it('takes back every cursor it gave, for every id in range', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max }), (id) => {
        expect(decodeCursor(encodeCursor(id), max)).toBe(id);
        expect(accepts(encodeCursor(id))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses a cursor naming an id beyond the range (before any query sees it)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: BigInt(max) + 1n, max: 10n ** 16n - 1n }), (id) => {
        const cursor = plainCursor(`p1.${id}`);
        expect(decodeCursor(cursor, max)).toBeUndefined();
        expect(accepts(cursor)).toBe(false);
      }),
      { numRuns: 300 },
    );
    for (const id of ['0', '-1', '01', '2147483648', '9007199254740991', '9007199254740992', '1e3', '1.0'])
      if (!(Number(id) >= 1 && Number(id) <= max && String(Number(id)) === id))
        expect(accepts(plainCursor(`p1.${id}`)), id).toBe(false);
  });

  it('accepts only canonical cursors: anything else is refused, never misread', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.base64String(), fc.stringMatching(/^[A-Za-z0-9_-]{1,30}$/)), (cursor) => {
        const id = decodeCursor(cursor, max);
        if (id !== undefined) expect(encodeCursor(id)).toBe(cursor);
        expect(accepts(cursor)).toBe(id !== undefined);
      }),
      { numRuns: 2000 },
    );
    expect(accepts(['a', 'b'])).toBe(false);
    expect(accepts('')).toBe(false);
  });
});
