import { MAX_SAFE_ID } from '@animal-store/contract';
import { HttpError } from './errors.js';

/**
 * Cursors are opaque to clients: base64url of `p1.<last id>`. The prefix versions the format so it can change without
 * misreading old cursors.
 */
export function encodeCursor(lastId: number): string {
  return Buffer.from(`p1.${lastId}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): number {
  const text = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const match = /^p1\.([1-9][0-9]{0,15})$/.exec(text);
  const id = match?.[1] ? Number(match[1]) : NaN;
  if (!Number.isSafeInteger(id) || id > MAX_SAFE_ID) {
    throw new HttpError(
      'invalid_request',
      'Invalid query parameter cursor: cursor is not valid; take it from the Link header',
    );
  }
  return id;
}

/** `Link` header value pointing at the next page, keeping limit and status. Relative to the host (RFC 8288 allows it). */
export function nextLink(path: string, params: { limit: number; status?: string | undefined; cursor: string }): string {
  // Built directly (a URLSearchParams per page showed in the profile); the values are an integer, an enum value and a
  // base64url cursor, and encodeURIComponent keeps anything else safe all the same.
  const status = params.status === undefined ? '' : `&status=${encodeURIComponent(params.status)}`;
  return `<${path}?limit=${params.limit}${status}&cursor=${encodeURIComponent(params.cursor)}>; rel="next"`;
}
