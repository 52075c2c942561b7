/** A retired operation (410 `gone` after its Sunset) as the client surfaces it: an error naming the replacement. */
import { afterEach, describe, expect, it } from 'vitest';
import { createAnimalStoreClient } from './client.js';
import { AnimalStoreGoneError, AnimalStoreResponseError } from './errors.js';
import { type Peer, RATE_HEADERS, startPeer } from './test-support/peer.js';

const gone = {
  status: 410,
  body: { code: 'gone', message: 'GET /v1/pets/{petId} was retired at its Sunset', status: 410 },
  headers: { ...RATE_HEADERS, Link: '</v1/pets>; rel="successor-version"' },
};
let peer: Peer | undefined;
afterEach(() => peer?.close());

describe('410 gone', () => {
  it('getPet throws AnimalStoreGoneError naming the successor, not retried', async () => {
    peer = await startPeer([gone]);
    const client = createAnimalStoreClient({ baseUrl: peer.baseUrl, apiKey: 'k', onDeprecation: () => undefined });
    const error: unknown = await client.getPet({ params: { petId: 7 } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AnimalStoreGoneError);
    expect(error).toBeInstanceOf(AnimalStoreResponseError);
    expect(error).toMatchObject({
      name: 'AnimalStoreGoneError',
      status: 410,
      code: 'gone',
      operation: 'getPet',
      method: 'GET',
      url: `${peer.origin}/v1/pets/7`,
      successor: expect.stringContaining('listPets / paginatePets') as unknown,
    });
    expect((error as Error).message).toBe(
      `@animal-store/client: getPet (GET ${peer.origin}/v1/pets/7) was retired by the service (410 gone); use ` +
        'GET /v1/pets with a status filter (listPets / paginatePets) instead.',
    );
    expect(peer.requests).toHaveLength(1);
  });

  it('other statuses stay typed results', async () => {
    peer = await startPeer([
      { status: 404, body: { code: 'not_found', message: 'no', status: 404 }, headers: RATE_HEADERS },
    ]);
    const client = createAnimalStoreClient({ baseUrl: peer.baseUrl, apiKey: 'k', onDeprecation: () => undefined });
    expect((await client.getPet({ params: { petId: 7 } })).status).toBe(404);
  });
});
