import { NEW_PET_FIELDS } from '../pets/fields.js';
import { listSql, NEW_PET_COLUMNS, PET_SELECT, type ListKind } from '../pets/sql.js';

/**
 * SQLite's planner takes the rowid range (`id > ?`) for a status and a cursor, filtering the status row by row, which
 * scans most of a large catalogue for a rare status; the `(status, id)` index answers it in O(page), so SQLite is told
 * to use it (docs/architecture.md#sqlite-list-statements).
 */
const STATUS_ID_INDEX = ' INDEXED BY "Pet_status_id_idx"';
/**
 * A parameter written `+?`: the planner does not read the value bound to it (same plan, same meaning: a bare `?` has
 * no affinity either). With a bare `?` in `LIMIT`, or in `"status" = ?` / `"id" > ?` once ANALYZE stored index
 * samples, SQLite recompiles the statement on every run (docs/architecture.md#sqlite-list-statements).
 */
const PARAM = '+?';
export const SQLITE_LIST_SQL = listSql(PET_SELECT, STATUS_ID_INDEX, PARAM) satisfies Record<ListKind, string>;
/** The same pages as ids only (answered from the indexes alone): see reads.ts. */
export const SQLITE_LIST_IDS_SQL = listSql('SELECT "id" FROM "Pet"', STATUS_ID_INDEX, PARAM) satisfies Record<
  ListKind,
  string
>;

/** A create, its values as pets/rows.ts `insertValues` orders them. */
export const INSERT_PET_SQL = `INSERT INTO "Pet" (${NEW_PET_COLUMNS}) VALUES (${NEW_PET_FIELDS.map(() => '?').join(', ')})`;
export const FIND_RECORD_SQL =
  'SELECT "fingerprint", "status", "location", "body" FROM "IdempotencyRecord" WHERE "lineageId" = ? AND "key" = ?';
export const INSERT_RECORD_SQL =
  'INSERT INTO "IdempotencyRecord" ("lineageId", "key", "fingerprint", "petId", "status", "location", "body", "expiresAt") VALUES (?, ?, ?, ?, ?, ?, ?, ?)';
/** Expired records in a bounded step. */
export const PURGE_SQL =
  'DELETE FROM "IdempotencyRecord" WHERE rowid IN (SELECT rowid FROM "IdempotencyRecord" WHERE "expiresAt" < ? LIMIT ?)';
