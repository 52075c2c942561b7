/** The real built server (`@animal-store/server`, a devDependency), as tooling/test-services starts it. */
import { fileURLToPath } from 'node:url';
import { type BuiltServer, startBuiltServer } from '@animal-store/test-services';

const SERVER_DIR = fileURLToPath(new URL('../../node_modules/@animal-store/server/', import.meta.url));

export type RealServer = BuiltServer;

export function startRealServer(
  options: { startTimeoutMs?: number; adminToken?: string; env?: Record<string, string> } = {},
): Promise<RealServer> {
  return startBuiltServer({ serverDir: SERVER_DIR, ...options });
}
