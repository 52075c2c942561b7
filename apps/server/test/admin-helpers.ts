import type { TestServer } from './helpers.js';
import { auth } from './helpers.js';

/** The admin token of the tests' servers (at least 32 visible characters). */
export const ADMIN_TOKEN = 'admin-token-for-tests-0123456789abcdef';

/** A request to the admin API with the admin token; a body is sent as JSON (a string as is). */
export function adminRequest(
  server: Pick<TestServer, 'url'>,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${server.url}/admin/v1${path}`, {
    method,
    headers: {
      ...auth(ADMIN_TOKEN),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
}

/** Every key row as the store reads it, every column included: compare before and after a refused request. */
export async function keysTable(server: Pick<TestServer, 'db'>): Promise<string> {
  const rows = await server.db.apiKeys.list({});
  return JSON.stringify(rows);
}
