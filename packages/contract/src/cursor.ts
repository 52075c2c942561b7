import { z } from 'zod';
import { lean } from './lean-effects.js';

/**
 * Page cursors are opaque to clients: base64url (no padding) of `p1.<last id>`. The prefix versions the format. Only
 * the canonical encoding of an id from 1 to the list's largest id is a cursor, so a forged one is refused by
 * validation, before any query: an id beyond the column's range never reaches the database.
 */
export function encodeCursor(lastId: number): string {
  return btoa(`p1.${lastId}`).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const BASE64URL = /^[A-Za-z0-9_-]{1,40}$/;
const PLAIN = /^p1\.([1-9][0-9]{0,15})$/;

/** The last id a cursor names, when it is the canonical cursor of an id from 1 to `maxId`; else undefined. */
export function decodeCursor(cursor: string, maxId: number): number | undefined {
  if (!BASE64URL.test(cursor) || cursor.length % 4 === 1) return undefined;
  let plain: string;
  try {
    plain = atob(cursor.replace(/-/g, '+').replace(/_/g, '/'));
  } catch {
    return undefined;
  }
  const digits = PLAIN.exec(plain)?.[1];
  if (digits === undefined) return undefined;
  const id = Number(digits);
  return id <= maxId && encodeCursor(id) === cursor ? id : undefined;
}

/** The `cursor` query parameter of a list whose ids go up to `maxId`: refused by validation unless it decodes. */
export function cursorParam(maxId: number) {
  return lean(
    z
      .string({ invalid_type_error: 'cursor must be a single string' })
      .refine(
        (cursor) => decodeCursor(cursor, maxId) !== undefined,
        'cursor is not valid; take it from the Link header',
      ),
  );
}
