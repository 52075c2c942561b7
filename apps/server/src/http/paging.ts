import { decodeCursor } from '@animal-store/contract';
import { AppError } from '../errors/app-error.js';

/** The last id a validated `cursor` names (undefined without one); the contract's rule bounded it already. */
export function afterIdOf(cursor: string | undefined, maxId: number): number | undefined {
  if (cursor === undefined) return undefined;
  const id = decodeCursor(cursor, maxId);
  if (id === undefined) throw new AppError('invalid_request', 'Invalid query parameter: cursor is not valid');
  return id;
}

/** `Link` header value pointing at the next page, keeping limit and status. Relative to the host (RFC 8288 allows it). */
export function nextLink(path: string, params: { limit: number; status?: string | undefined; cursor: string }): string {
  // Built directly, not through a URLSearchParams per listed page (the list's hot path); the values are an integer, an enum value and a
  // base64url cursor, and encodeURIComponent keeps anything else safe all the same.
  const status = params.status === undefined ? '' : `&status=${encodeURIComponent(params.status)}`;
  return `<${path}?limit=${params.limit}${status}&cursor=${encodeURIComponent(params.cursor)}>; rel="next"`;
}
