import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { LeanEffects, lean } from './lean-effects.js';
import { ListPetsQuery, NewPet, PetIdParams } from './schemas.js';

/** zod's own ZodEffects with the same definition: what LeanEffects must answer exactly as. */
const zods = <T extends z.ZodTypeAny, O, I>(schema: z.ZodEffects<T, O, I>) => new z.ZodEffects<T, O, I>(schema._def);

const toDecimal = (v: unknown) => (typeof v === 'string' && /^[0-9]+$/.test(v) ? Number(v) : v);
const EFFECTS = {
  preprocess: z.preprocess(toDecimal, z.number().int().max(100)),
  'preprocess that adds an issue': z.preprocess((v, ctx) => {
    // An issue, then a value the inner schema accepts: the answer is still a failure.
    if (v === 'bad') ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'bad seen', path: ['extra'] });
    if (v === 'fatal') ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'fatal', fatal: true });
    return v === 'bad' || v === 'fatal' ? 5 : toDecimal(v);
  }, z.number()),
  refine: z
    .string()
    .min(2)
    .refine((s) => s !== 'no', 'not no'),
  superRefine: z.string().superRefine((s, ctx) => {
    if (s.includes('x')) ctx.addIssue({ code: z.ZodIssueCode.custom, message: `x at ${ctx.path.join('.')}` });
    if (s.includes('f')) ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'fatal f', fatal: true });
  }),
  'refine of a dirty inner value': z
    .string()
    .superRefine((s, ctx) => {
      if (s === 'dirty') ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'inner' });
    })
    .refine((s) => s.length < 4, 'too long'),
};

const VALUES = [undefined, null, 0, 7, 101, 'no', 'ok', '42', '420', 'bad', 'fatal', 'x', 'fx', 'dirty', [1], { a: 1 }];

describe('LeanEffects', () => {
  for (const [name, schema] of Object.entries(EFFECTS)) {
    it(`answers as zod's ZodEffects: ${name}, alone and nested in an object`, () => {
      const [mine, theirs] = [lean(schema as z.ZodEffects<z.ZodTypeAny>), zods(schema as z.ZodEffects<z.ZodTypeAny>)];
      expect(mine).toBeInstanceOf(LeanEffects);
      expect(theirs).not.toBeInstanceOf(LeanEffects);
      const nested = (s: z.ZodTypeAny) => z.object({ outer: z.object({ field: s }) });
      const answer = (s: z.ZodTypeAny, value: unknown) => {
        const r = s.safeParse(value);
        return r.success ? { data: r.data as unknown } : { issues: r.error.issues };
      };
      const check = (value: unknown) => {
        expect(answer(mine, value)).toEqual(answer(theirs, value));
        expect(answer(nested(mine), { outer: { field: value } })).toEqual(
          answer(nested(theirs), { outer: { field: value } }),
        );
      };
      for (const value of VALUES) check(value);
      fc.assert(fc.property(fc.oneof(fc.string(), fc.integer(), fc.anything()), check), { numRuns: 300 });
    });
  }

  it('leaves transforms and asynchronous parses to zod', async () => {
    const transform = lean(z.string().transform((s) => s.length));
    expect(transform.parse('abc')).toBe(3);
    const refine = lean(z.string().refine(async (s) => Promise.resolve(s === 'yes'), 'not yes'));
    await expect(refine.parseAsync('yes')).resolves.toBe('yes');
    expect((await refine.safeParseAsync('no')).error?.issues[0]?.message).toBe('not yes');
    expect(() => refine.parse('yes')).toThrow(/Async refinement/);
  });

  it('keeps the methods that copy a schema on the class (describe) and the contract on it', () => {
    expect(lean(EFFECTS.refine).describe('d')).toBeInstanceOf(LeanEffects);
    const limit = ListPetsQuery.shape.limit.unwrap();
    expect(limit).toBeInstanceOf(LeanEffects);
    expect(ListPetsQuery.shape.cursor.unwrap()).toBeInstanceOf(LeanEffects);
    expect(PetIdParams.shape.petId).toBeInstanceOf(LeanEffects);
    expect(NewPet.shape.name).toBeInstanceOf(LeanEffects);
  });
});
