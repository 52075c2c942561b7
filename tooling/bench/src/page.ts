/**
 * The seeded catalogue and the canned first page. Seeding and the baselines share this file, so the baselines answer
 * byte for byte what the server answers for `GET /v1/pets` (limit 20) on a seeded database.
 */

/** Status of the i-th pet (1-based) of a catalogue of `total`: the last 20 % are `sold`, the rest alternate. */
export function seedStatus(i: number, total: number): 'available' | 'pending' | 'sold' {
  if (i > Math.floor(total * 0.8)) return 'sold';
  return i % 2 === 1 ? 'available' : 'pending';
}

export function seedPet(i: number, total: number): { id: number; name: string; categoryId: number; status: string } {
  return { id: i, name: `pet-${i}`, categoryId: (i % 10) + 1, status: seedStatus(i, total) };
}

/** Pets in every throughput database (list, get and the floor/ceiling page). */
export const CATALOGUE_SIZE = 1000;
export const PAGE_SIZE = 20;

/** The bytes of `GET /v1/pets` (default limit 20) on a freshly seeded catalogue. */
export function cannedPage(): string {
  return JSON.stringify(Array.from({ length: PAGE_SIZE }, (_, k) => seedPet(k + 1, CATALOGUE_SIZE)));
}
