import { hash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { samplePets } from '../../test/pet-samples.js';
import { fingerprintOf } from './idempotency.js';

describe('fingerprintOf', () => {
  const of = (values: unknown[]) => hash('sha256', JSON.stringify(values), 'base64url');

  it('is the hash of the fields in order, absent ones as null: the form records already stored hold', () => {
    expect(fingerprintOf({ name: 'Rex', categoryId: 3 })).toBe(of(['Rex', 3, null]));
    expect(fingerprintOf({ name: 'Rex', categoryId: 3, status: 'sold' })).toBe(of(['Rex', 3, 'sold']));
  });

  it('tells apart every difference in what would be created, and nothing else', () => {
    const base = { name: 'Rex', categoryId: 3, status: 'sold' as const };
    expect(fingerprintOf({ status: 'sold', categoryId: 3, name: 'Rex' })).toBe(fingerprintOf(base));
    const seen = new Set([fingerprintOf(base)]);
    for (const changed of [
      { ...base, name: 'Rex ' },
      { ...base, categoryId: 4 },
      { ...base, status: undefined },
    ])
      seen.add(fingerprintOf(changed));
    expect(seen.size).toBe(4);
    // Every field of NewPet counts, each sample value of it and its absence (iterated from the contract's schema).
    const pets = samplePets();
    expect(new Set(pets.map(fingerprintOf)).size).toBe(pets.length);
  });
});
