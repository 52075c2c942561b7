import { describe, expect, it } from 'vitest';
import { memoOf, sharedPage } from '../shared-page.js';
import { firstRows } from './pets.js';

const pets = (n: number) => Array.from({ length: n }, (_, i) => ({ id: i + 1, name: `p${i + 1}`, categoryId: 1 }));

describe('firstRows', () => {
  it('cuts a shared page once per limit, into a shared page', () => {
    const rows = sharedPage(pets(4));
    const cut = firstRows(rows, 3);
    expect(cut).toEqual(pets(3));
    expect(firstRows(rows, 3)).toBe(cut);
    expect(memoOf(cut)).toBeDefined();
    expect(firstRows(rows, 2)).toEqual(pets(2));
    expect(firstRows(rows, 4)).toBe(rows); // nothing to cut
  });

  it('cuts anything else anew on every call', () => {
    const rows = pets(4);
    const cut = firstRows(rows, 3);
    expect(cut).toEqual(pets(3));
    expect(firstRows(rows, 3)).not.toBe(cut);
    expect(memoOf(cut)).toBeUndefined();
  });
});
