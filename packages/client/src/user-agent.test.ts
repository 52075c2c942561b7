/**
 * The User-Agent as it leaves the process: Node's fetch (undici) against a real node:http server on 127.0.0.1, which
 * records the headers it received.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createAnimalStoreAdminClient } from './admin.js';
import { createAnimalStoreClient } from './client.js';
import { VERSION } from './index.js';
import { type Peer, RATE_HEADERS, startPeer } from './test-support/peer.js';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};
let peer: Peer | undefined;
afterEach(() => peer?.close());

describe('User-Agent', () => {
  it('exports the version of package.json', () => {
    expect(VERSION).toBe(version);
    expect(VERSION).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('sends animal-store-client/<version> node/<version> on every request, retries included', async () => {
    peer = await startPeer([
      { status: 503, headers: RATE_HEADERS },
      { status: 200, body: [], headers: RATE_HEADERS },
    ]);
    const client = createAnimalStoreClient({
      baseUrl: peer.baseUrl,
      apiKey: 'k',
      retry: { baseDelayMs: 1, maxRetries: 1 },
    });
    expect((await client.listPets()).status).toBe(200);
    expect(peer.requests.map((r) => r.headers['user-agent'])).toEqual([
      `animal-store-client/${version} node/${process.versions.node}`,
      `animal-store-client/${version} node/${process.versions.node}`,
    ]);
  });

  it("keeps the caller's own User-Agent", async () => {
    peer = await startPeer([{ status: 200, body: [], headers: RATE_HEADERS }]);
    const client = createAnimalStoreClient({ baseUrl: peer.baseUrl, apiKey: 'k' });
    await client.listPets({ extraHeaders: { 'User-Agent': 'stock-sync/2.1' } });
    expect(peer.requests[0]?.headers['user-agent']).toBe('stock-sync/2.1');
  });

  it('is sent by the admin client too', async () => {
    peer = await startPeer([{ status: 200, body: { keys: [], nextCursor: null }, headers: RATE_HEADERS }]);
    const admin = createAnimalStoreAdminClient({ baseUrl: peer.origin, adminToken: 't'.repeat(32) });
    await admin.listKeys({ query: {} });
    expect(peer.requests[0]?.headers['user-agent']).toBe(
      `animal-store-client/${version} node/${process.versions.node}`,
    );
  });
});
