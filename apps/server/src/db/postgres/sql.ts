import { MAX_SAFE_ID } from '@animal-store/contract';
import { NEW_PET_FIELDS, PET_FIELDS, type PetFieldKind } from '../pets/fields.js';
import { column, NEW_PET_COLUMNS, PET_SELECT } from '../pets/sql.js';

/** `?` placeholders as PostgreSQL's `$1`, `$2`, ... */
export const numbered = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

/** The smallest int8: the cursor of a page that has none. */
export const NO_CURSOR = '-9223372036854775808';

/** The array type a field's values are sent as (int64 as decimal text cast to int8: exact). */
const ARRAY_OF: Record<PetFieldKind, string> = { int64: 'int8[]', text: 'text[]', enum: 'text[]' };

/**
 * A pet as JSON, made by PostgreSQL from the columns of `row` (a table or CTE alias): the same bytes as
 * `JSON.stringify` of the Pet rows.ts builds (fields in the same order, an optional NULL one left out; to_json escapes
 * text as JSON.stringify does, and int8 prints as the JSON number).
 */
export function petJsonSql(row: string): string {
  const members = PET_FIELDS.map((f, i) => {
    const value = `${row}.${column(f.name)}`;
    const member = `'${i === 0 ? '{' : ','}"${f.name}":' || ${f.kind === 'int64' ? value : `to_json(${value})::text`}`;
    return f.optional ? `CASE WHEN ${value} IS NULL THEN '' ELSE ${member} END` : member;
  });
  return `${members.join(' || ')} || '}'`;
}

const SAFE = `BETWEEN -${MAX_SAFE_ID} AND ${MAX_SAFE_ID}`;
const ON_PAGE = 'FILTER (WHERE p.n <= a.lim)';
/** Why a page is refused: `int64` (a value beyond 2^53-1), or the name of an enum field holding an unknown value. */
const REFUSED = [
  `WHEN coalesce(bool_or(NOT (${PET_FIELDS.filter((f) => f.kind === 'int64')
    .map((f) => `p.${column(f.name)} ${SAFE}`)
    .join(' AND ')})) ${ON_PAGE}, false) THEN 'int64'`,
  ...PET_FIELDS.filter((f) => f.values !== undefined).map((f) => {
    const values = [...f.values!].map((v) => `'${v}'`).join(', ');
    return `WHEN coalesce(bool_or(p.${column(f.name)} NOT IN (${values})) ${ON_PAGE}, false) THEN '${f.name}'`;
  }),
].join('\n      ');

/**
 * Any number of list pages in one statement, each made into its JSON answer by PostgreSQL: `$1` the pages' indexes,
 * `$2` their statuses (null: any), `$3` their cursors ({@link NO_CURSOR}: none), `$4` their limits. One row per page:
 * its JSON, its last id, whether more follow, and why a pet on it cannot be answered ({@link REFUSED}: refused, never
 * rounded or passed on, as pets/rows.ts does for rows). A page with a status reads the `(status, id)` index: the row
 * comparison is an index condition only that index can take (with `"id" > ?` the planner took the primary key and
 * filtered the status row by row).
 */
export const PAGES_SQL = `SELECT a.i, x.json, x.last, x.more, x.refused
FROM unnest($1::int4[], $2::text[], $3::int8[], $4::int4[]) AS a(i, status, after, lim)
CROSS JOIN LATERAL (
  SELECT '[' || coalesce(string_agg(${petJsonSql('p')}, ',' ORDER BY p."id") ${ON_PAGE}, '') || ']' AS json,
    (max(p."id") ${ON_PAGE})::text AS last,
    count(*) > a.lim AS more,
    CASE ${REFUSED} END AS refused
  FROM (
    SELECT q.*, row_number() OVER (ORDER BY q."id") AS n FROM (
      (${PET_SELECT}
        WHERE a.status IS NULL AND "id" > a.after ORDER BY "id" LIMIT a.lim + 1)
      UNION ALL
      (${PET_SELECT}
        WHERE "status" = a.status AND ("status", "id") > (a.status, a.after) ORDER BY "status", "id" LIMIT a.lim + 1)
    ) q
  ) p
) x`;

const N = NEW_PET_FIELDS.length;
/**
 * A batch of creates in one statement (see writes.ts): `$1`..`$N` the pets' values, one array per field of
 * NEW_PET_FIELDS; then the idempotency scopes' API key ids, keys, fingerprints and location prefixes (null: no key),
 * and the records' time to live (ms). Ids are drawn from the Pet id sequence of the migration (BIGSERIAL); a record
 * goes in where its key is free, then the pets whose record went in (or that have no key). One row per member, in
 * order: its id, whether its key was free, whether its pet was created, and the answer stored for it.
 */
export const CREATE_BATCH_SQL = `WITH input AS MATERIALIZED (
  SELECT nextval('"Pet_id_seq"') AS "id", t.*,
         t.scope_key IS NULL
           OR pg_try_advisory_xact_lock(hashtextextended(t.scope_lineage_id::text || ':' || t.scope_key, 14)) AS free
  FROM unnest(${NEW_PET_FIELDS.map((f, i) => `$${i + 1}::${ARRAY_OF[f.kind]}`).join(', ')},
              $${N + 1}::int4[], $${N + 2}::text[], $${N + 3}::text[], $${N + 4}::text[]) WITH ORDINALITY
       AS t(${NEW_PET_COLUMNS}, scope_lineage_id, scope_key, scope_fingerprint, scope_prefix, ord)
),
records AS (
  INSERT INTO "IdempotencyRecord" ("lineageId", "key", "fingerprint", "petId", "status", "location", "body", "expiresAt")
  SELECT scope_lineage_id, scope_key, scope_fingerprint, input."id", 201, scope_prefix || input."id",
         ${petJsonSql('input')}, timezone('UTC', now()) + $${N + 5}::float8 * interval '1 millisecond'
  FROM input WHERE scope_key IS NOT NULL AND free
  ON CONFLICT DO NOTHING
  RETURNING "petId", "status", "location", "body"
),
pets AS (
  INSERT INTO "Pet" ("id", ${NEW_PET_COLUMNS})
  SELECT "id", ${NEW_PET_COLUMNS} FROM input WHERE scope_key IS NULL OR "id" IN (SELECT "petId" FROM records)
  RETURNING "id"
)
SELECT input."id"::text AS id, input.free, pets."id" IS NOT NULL AS created,
       records."status", records."location", records."body"
FROM input LEFT JOIN pets ON pets."id" = input."id" LEFT JOIN records ON records."petId" = input."id"
ORDER BY input.ord`;

/** The stored answers of these keys (`$1` lineage ids, `$2` keys). */
export const FIND_RECORDS_SQL = `SELECT r."lineageId", r."key", r."fingerprint", r."status", r."location", r."body"
FROM "IdempotencyRecord" r JOIN unnest($1::int4[], $2::text[]) AS k(lineage_id, key) ON r."lineageId" = k.lineage_id AND r."key" = k.key`;

/** Expired records in a bounded step (`$1` rows at most), skipping rows another purge holds. */
export const PURGE_SQL = `DELETE FROM "IdempotencyRecord" WHERE ctid IN (
  SELECT ctid FROM "IdempotencyRecord" WHERE "expiresAt" < timezone('UTC', now()) LIMIT $1 FOR UPDATE SKIP LOCKED)`;
