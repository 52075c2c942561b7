import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KEY_NAME_MAX_LENGTH, NewApiKey, ApiKeyChanges } from './admin-schemas.js';
import { NAME_MAX_LENGTH, NewPet } from './schemas.js';
import { codePoints } from './text.js';

/** Every place a name is given, pets and API keys alike: one rule, its own maximum. */
const NAME_FIELDS = [
  { what: 'a pet name', max: NAME_MAX_LENGTH, accepts: (name: string) => NewPet.safeParse({ name, categoryId: 1 }) },
  {
    what: 'a new key name',
    max: KEY_NAME_MAX_LENGTH,
    accepts: (name: string) => NewApiKey.safeParse({ plan: 'pro', name }),
  },
  {
    what: 'a changed key name',
    max: KEY_NAME_MAX_LENGTH,
    accepts: (name: string) => ApiKeyChanges.safeParse({ name }),
  },
];

const isControl = (c: string) => /\p{Cc}/u.test(c);
/** Any Unicode scalar value that is not a control character (astral planes included). */
const textChar = fc
  .integer({ min: 0x20, max: 0x10ffff })
  .filter((cp) => (cp < 0xd800 || cp > 0xdfff) && !(cp >= 0x7f && cp <= 0x9f))
  .map((cp) => String.fromCodePoint(cp));
const control = fc
  .oneof(fc.integer({ min: 0, max: 0x1f }), fc.integer({ min: 0x7f, max: 0x9f }))
  .map((cp) => String.fromCharCode(cp));
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((u) => String.fromCharCode(u));
const visible = fc.constantFrom('a', 'Z', '名', 'é', '\u{1F415}', '0');

describe.each(NAME_FIELDS)('the name rule for $what', ({ max, accepts }) => {
  const name = fc.tuple(fc.array(textChar, { maxLength: max - 1 }), visible, fc.nat()).map(([chars, v, at]) => {
    chars.splice(at % (chars.length + 1), 0, v);
    return chars.join('');
  });

  it('accepts every text of 1 to max code points with one visible character, and it survives UTF-8 as sent', () => {
    fc.assert(
      fc.property(name, (s) => {
        expect(accepts(s).success, JSON.stringify(s)).toBe(true);
        expect(Buffer.from(s, 'utf8').toString('utf8')).toBe(s);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses any name with a control character (C0, DEL, C1) or a lone surrogate anywhere', () => {
    fc.assert(
      fc.property(name, fc.oneof(control, loneSurrogate), fc.nat(), (s, bad, at) => {
        const chars = [...s];
        chars.splice(at % (chars.length + 1), 0, bad);
        const result = accepts(chars.join(''));
        expect(result.success).toBe(false);
        expect(result.error?.issues[0]?.path).toEqual(['name']);
      }),
      { numRuns: 300 },
    );
  });

  it('counts code points: max astral characters fit, one more does not', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0x10000, max: 0x10ffff }), (cp) => {
        const c = String.fromCodePoint(cp);
        expect(accepts(c.repeat(max)).success).toBe(true);
        expect(accepts(c.repeat(max + 1)).success).toBe(false);
      }),
      { numRuns: 50 },
    );
  });

  it('refuses whitespace only, and agrees with the rule on any string', () => {
    expect(accepts(' \t\u00a0\u3000').success).toBe(false);
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' })), (s) => {
        const expected = s.trim().length > 0 && codePoints(s) <= max && ![...s].some(isControl) && !/\p{Cs}/u.test(s);
        expect(accepts(s).success, JSON.stringify(s)).toBe(expected);
      }),
      { numRuns: 1000 },
    );
  });
});
