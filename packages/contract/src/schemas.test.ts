import { describe, expect, it } from 'vitest';
import { ERROR_CODES, ERROR_STATUS, ErrorBody, errorBody } from './errors.js';
import { ListPetsQuery, NewPet, Pet, PetIdParams } from './schemas.js';

describe('NewPet', () => {
  it('accepts the minimal body and strips unknown fields and a client-sent id', () => {
    const parsed = NewPet.parse({ name: 'Rex', categoryId: 3, id: 99, colour: 'red' });
    expect(parsed).toEqual({ name: 'Rex', categoryId: 3 });
    expect('status' in parsed).toBe(false);
  });

  it.each([
    [{ categoryId: 1 }, 'name'],
    [{ name: '', categoryId: 1 }, 'name'],
    [{ name: ' \t\n', categoryId: 1 }, 'name'],
    [{ name: 'x'.repeat(256), categoryId: 1 }, 'name'],
    [{ name: 42, categoryId: 1 }, 'name'],
    [{ name: 'Rex' }, 'categoryId'],
    [{ name: 'Rex', categoryId: '3' }, 'categoryId'],
    [{ name: 'Rex', categoryId: 1.5 }, 'categoryId'],
    [{ name: 'Rex', categoryId: 0 }, 'categoryId'],
    [{ name: 'Rex', categoryId: -4 }, 'categoryId'],
    [{ name: 'Rex', categoryId: 9007199254740992 }, 'categoryId'],
    [{ name: 'Rex', categoryId: 1, status: null }, 'status'],
    [{ name: 'Rex', categoryId: 1, status: 'lost' }, 'status'],
  ])('refuses %j at %s', (body, field) => {
    const result = NewPet.safeParse(body);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual([field]);
  });

  it('counts characters as code points, and keeps int64 values up to 2^53-1 exact', () => {
    expect(NewPet.safeParse({ name: '🐕'.repeat(255), categoryId: 1 }).success).toBe(true);
    expect(NewPet.safeParse({ name: '🐕'.repeat(256), categoryId: 1 }).success).toBe(false);
    expect(NewPet.parse({ name: 'Big', categoryId: 9007199254740991 }).categoryId).toBe(9007199254740991);
    expect(NewPet.parse({ name: 'Big', categoryId: 3000000000 }).categoryId).toBe(3000000000);
  });

  it('refuses what cannot be stored faithfully: control characters and lone surrogates', () => {
    for (const name of [
      'a\u0000b',
      'tab\there',
      'line\nbreak',
      'del\u007f',
      'c1\u0085',
      '\ud800',
      'x\udc00y',
      '\udbff\ud800',
    ]) {
      const result = NewPet.safeParse({ name, categoryId: 1 });
      expect(result.success, JSON.stringify(name)).toBe(false);
      expect(result.error?.issues[0]?.path).toEqual(['name']);
    }
    // Everything else is text: pairs of surrogates, non-Latin scripts, format characters, private use, noncharacters.
    for (const name of ['\ud83d\udc15', 'Ωμέγα', '名前', 'a\u200db', '\ue000', 'x\uffff', '\u00a0Rex']) {
      expect(NewPet.safeParse({ name, categoryId: 1 }).success, JSON.stringify(name)).toBe(true);
    }
  });
});

describe('ListPetsQuery', () => {
  it('turns plain decimal strings into numbers', () => {
    expect(ListPetsQuery.parse({ limit: '1' })).toEqual({ limit: 1 });
    expect(ListPetsQuery.parse({ limit: '100', status: 'sold' })).toEqual({ limit: 100, status: 'sold' });
    expect(ListPetsQuery.parse({})).toEqual({});
  });

  it.each(['0', '101', '-1', 'abc', '1.5', '1e2', '', ' 5', '0x10', '05', ['1', '2']])('refuses limit=%j', (limit) => {
    const result = ListPetsQuery.safeParse({ limit });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(['limit']);
    expect(result.error?.issues[0]?.message).toBe('limit must be an integer from 1 to 100');
  });

  it('refuses an unknown or repeated status', () => {
    expect(ListPetsQuery.safeParse({ status: 'lost' }).success).toBe(false);
    expect(ListPetsQuery.safeParse({ status: ['sold', 'pending'] }).success).toBe(false);
  });
});

describe('PetIdParams', () => {
  it('accepts ids up to 2^53-1 and refuses the rest', () => {
    expect(PetIdParams.parse({ petId: '9007199254740991' }).petId).toBe(9007199254740991);
    for (const petId of ['0', '-1', 'abc', '1.0', '9007199254740992', '99999999999999999999']) {
      expect(PetIdParams.safeParse({ petId }).success).toBe(false);
    }
  });
});

describe('Error', () => {
  it('has a status that follows from its code', () => {
    expect(errorBody('not_found', 'No pet 4')).toEqual({ code: 'not_found', message: 'No pet 4', status: 404 });
    for (const code of ERROR_CODES) expect(ErrorBody.parse(errorBody(code, 'x')).status).toBe(ERROR_STATUS[code]);
  });

  it('Pet requires an id', () => {
    expect(Pet.safeParse({ name: 'Rex', categoryId: 1 }).success).toBe(false);
  });
});
