import type { Pet } from '@animal-store/contract';
import { serializedAs, type SerializedAs } from '../../fast-path/serialized-body.js';

/**
 * A list page as its answer: the JSON array of its pets, made once, with what the answer's headers need. The hot read
 * paths build it without a Pet object per row (SQLite joins the JSON of each pet, kept in memory: see
 * sqlite/reads.ts); a page may be shared by several answers (a cached page, one read shared by identical requests).
 */
export interface PetPage extends SerializedAs<Pet[]> {
  /** The JSON array of the page's pets, sent as is. */
  readonly json: string;
  /** The last pet's id (the next page's cursor); undefined for an empty page. */
  readonly lastId: number | undefined;
  /** Whether more pets follow (the answer links to the next page). */
  readonly more: boolean;
}

/**
 * A frozen page whose JSON answer is exactly `json` (its length and ETag are then worked out once per page, see
 * fast-path/serialized-body.ts).
 */
export function petPage(json: string, lastId: number | undefined, more: boolean): PetPage {
  return serializedAs<Omit<PetPage, keyof SerializedAs<Pet[]>>, Pet[]>({ json, lastId, more }, json);
}

/** The page of `rows`, read with one row more than `limit` to tell whether more follow. */
export function pageOfPets(rows: readonly Pet[], limit: number): PetPage {
  const pets = rows.length > limit ? rows.slice(0, limit) : rows;
  return petPage(JSON.stringify(pets), pets[pets.length - 1]?.id, rows.length > limit);
}

/** The page's pets as values (tests, response validation): parsed from the JSON the answer sends. */
export const petsOf = (page: PetPage): Pet[] => JSON.parse(page.json) as Pet[];
