import { describe, expect, it } from 'vitest';
import { asBody, memoOf, serializedAs } from './serialized-body.js';

describe('serializedAs', () => {
  it('freezes the value and gives it a memo of its own holding the body', () => {
    const page = serializedAs({ json: '[]', more: false }, '[]');
    expect(Object.isFrozen(page)).toBe(true);
    const memo = memoOf(page);
    expect(memo).toEqual({ entity: { body: '[]' } });
    expect(memoOf(page)).toBe(memo);
    expect(memoOf(serializedAs({ json: '[]', more: false }, '[]'))).not.toBe(memo);
    // The memo stays writable: what is worked out from the body is kept there.
    memo!.entity.etag = '"x"';
    expect(memoOf(page)?.entity.etag).toBe('"x"');
  });

  it('hides the memo: the JSON, the keys and equality see the value only', () => {
    const pet = serializedAs({ id: 1, name: 'a' }, '{"id":1,"name":"a"}');
    expect(JSON.stringify(pet)).toBe('{"id":1,"name":"a"}');
    expect(Object.keys(pet)).toEqual(['id', 'name']);
    expect(pet).toEqual({ id: 1, name: 'a' });
  });

  it('has no memo for anything it did not make, frozen or not', () => {
    expect(memoOf([{ id: 1 }])).toBeUndefined();
    expect(memoOf(Object.freeze([Object.freeze({ id: 1 })]))).toBeUndefined();
    expect(memoOf({ id: 1 })).toBeUndefined();
    expect(memoOf(undefined)).toBeUndefined();
    expect(memoOf(null)).toBeUndefined();
  });
});

describe('asBody', () => {
  it('is the value itself, typed as the body its given JSON is', () => {
    const page = serializedAs<{ json: string }, number[]>({ json: '[1,2]' }, '[1,2]');
    const body: number[] = asBody(page);
    expect(body).toBe(page);
    expect(memoOf(body)?.entity.body).toBe('[1,2]');
  });
});
