import { describe, expect, it } from 'vitest';
import { memoOf, sharedPage } from './shared-page.js';

describe('sharedPage', () => {
  it('freezes the records and the array, and gives the page a memo of its own', () => {
    const page = sharedPage([
      { id: 1, name: 'a' },
      { id: 2, name: 'b' },
    ]);
    expect(Object.isFrozen(page) && page.every((record) => Object.isFrozen(record))).toBe(true);
    const memo = memoOf(page);
    expect(memo).toEqual({});
    expect(memoOf(page)).toBe(memo);
    expect(memoOf(sharedPage([{ id: 1, name: 'a' }]))).not.toBe(memo);
    // The memo stays writable: what is worked out from the page is kept there.
    memo!.entity = { body: '[]' };
    expect(memoOf(page)?.entity?.body).toBe('[]');
  });

  it('hides the memo: the JSON, the keys and equality see the records only', () => {
    const page = sharedPage([{ id: 1, name: 'a' }]);
    memoOf(page)!.entity = { body: 'x' };
    expect(JSON.stringify(page)).toBe('[{"id":1,"name":"a"}]');
    expect(Object.keys(page)).toEqual(['0']);
    expect(page).toEqual([{ id: 1, name: 'a' }]);
  });

  it('has no memo for anything it did not make, frozen or not', () => {
    expect(memoOf([{ id: 1 }])).toBeUndefined();
    expect(memoOf(Object.freeze([Object.freeze({ id: 1 })]))).toBeUndefined();
    expect(memoOf({ id: 1 })).toBeUndefined();
    expect(memoOf(undefined)).toBeUndefined();
    expect(memoOf(null)).toBeUndefined();
  });
});
