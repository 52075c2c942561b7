import { ENVIRONMENTS, GET_PET_DEPRECATION } from '@animal-store/contract';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAnimalStoreClient } from './client.js';
import type { DeprecationNotice } from './deprecation.js';
import { AnimalStoreError, AnimalStoreNetworkError, AnimalStoreResponseError } from './errors.js';
import type { RetryEvent, RetryOptions } from './retry.js';
import { type Peer, type PeerReply, RATE_HEADERS, closedPort, startPeer, until } from './test-support/peer.js';

const API_KEY = 'ask_test_secret_0123456789';
const rex = { id: 1, name: 'Rex', categoryId: 3, status: 'available' };
const ok = (body: unknown, headers: Record<string, string> = {}): PeerReply => ({
  status: 200,
  body,
  headers: { ...RATE_HEADERS, ...headers },
});
const error = (status: number, code: string, headers: Record<string, string> = {}): PeerReply => ({
  status,
  body: { code, message: `${code} happened`, status },
  headers: { ...RATE_HEADERS, ...headers },
});

let peer: Peer | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await peer?.close();
  peer = undefined;
});

async function clientFor(replies: PeerReply[], retry: RetryOptions = {}) {
  peer = await startPeer(replies);
  const events: RetryEvent[] = [];
  const client = createAnimalStoreClient({
    baseUrl: peer.baseUrl,
    apiKey: API_KEY,
    retry: { random: () => 0.5, baseDelayMs: 1, ...retry, onRetry: (event) => events.push(event) },
    onDeprecation: () => undefined,
  });
  return { client, events, peer };
}

describe('requests', () => {
  it('sends the bearer key, the contract path and the JSON body, and returns the typed result', async () => {
    const created = { id: 3000000000, name: 'Big', categoryId: 9007199254740991 };
    const { client, peer } = await clientFor([
      { status: 201, body: created, headers: { Location: '/v1/pets/3000000000' } },
    ]);
    const result = await client.createPet({ body: { name: 'Big', categoryId: 9007199254740991 } });
    expect(result.status).toBe(201);
    if (result.status !== 201) throw new Error('unreachable');
    expect(result.body).toEqual(created);
    expect(result.headers.get('location')).toBe('/v1/pets/3000000000');
    const [request] = peer.requests;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/v1/pets');
    expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request?.headers['content-type']).toMatch(/^application\/json/);
    expect(request?.body).toBe('{"name":"Big","categoryId":9007199254740991}');
  });

  it('serialises the query and path parameters from the contract', async () => {
    const { client, peer } = await clientFor([ok([rex]), ok(rex)]);
    await client.listPets({ query: { status: 'sold', limit: 5 } });
    await client.getPet({ params: { petId: 9007199254740991 } });
    expect(peer.requests.map((r) => r.url)).toEqual(['/v1/pets?status=sold&limit=5', '/v1/pets/9007199254740991']);
  });

  it('takes the base URL from the environment presets, and an explicit baseUrl wins', async () => {
    const urls: string[] = [];
    const fetch: typeof globalThis.fetch = async (input) => {
      urls.push(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
      return new Response('[]', { status: 200, headers: { 'content-type': 'application/json' } });
    };
    await createAnimalStoreClient({ environment: 'staging', apiKey: API_KEY, fetch }).listPets();
    await createAnimalStoreClient({ apiKey: API_KEY, fetch }).listPets();
    await createAnimalStoreClient({
      environment: 'staging',
      baseUrl: 'http://10.0.0.1:8080/v1/',
      apiKey: API_KEY,
      fetch,
    }).listPets();
    expect(urls).toEqual([
      `${ENVIRONMENTS.staging}/pets`,
      `${ENVIRONMENTS.production}/pets`,
      'http://10.0.0.1:8080/v1/pets',
    ]);
  });

  it('refuses a missing key without echoing anything', () => {
    expect(() => createAnimalStoreClient({ apiKey: '' })).toThrow('apiKey is required');
  });
});

describe('rate-limit info', () => {
  it('is undefined before any response, then the last X-RateLimit-* figures seen', async () => {
    const { client } = await clientFor([
      ok([], { 'X-RateLimit-Limit': '60', 'X-RateLimit-Remaining': '12', 'X-RateLimit-Reset': '1900000123' }),
      error(401, 'unauthorized', {
        'X-RateLimit-Limit': '60',
        'X-RateLimit-Remaining': '11',
        'X-RateLimit-Reset': '1900000124',
      }),
      { status: 200, body: [] },
    ]);
    expect(client.rateLimit).toBeUndefined();
    await client.listPets();
    expect(client.rateLimit).toEqual({ limit: 60, remaining: 12, reset: 1900000123 });
    await client.listPets();
    expect(client.rateLimit).toEqual({ limit: 60, remaining: 11, reset: 1900000124 });
    await client.listPets(); // no headers: the last figures stay
    expect(client.rateLimit).toEqual({ limit: 60, remaining: 11, reset: 1900000124 });
  });
});

describe('retries', () => {
  it('waits Retry-After after a 429, then retries', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { client, events, peer } = await clientFor([
      error(429, 'rate_limit_exceeded', { 'Retry-After': '2' }),
      ok([rex]),
    ]);
    const call = client.listPets();
    await until(() => events.length === 1);
    expect(events[0]).toMatchObject({ reason: 'rate-limited', status: 429, delayMs: 2000, retry: 1 });
    await vi.advanceTimersByTimeAsync(1990);
    await until(() => false, 50).catch(() => undefined);
    expect(peer.requests).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(10);
    const result = await call;
    expect(result.status).toBe(200);
    expect(result.body).toEqual([rex]);
    expect(peer.requests).toHaveLength(2);
    expect(client.rateLimit?.remaining).toBe(59);
  });

  it('gives a 429 back at once, not retrying early, when Retry-After is beyond maxDelayMs (a ban, a day limit)', async () => {
    const { client, events, peer } = await clientFor(
      [error(429, 'api_key_banned', { 'Retry-After': '3600' }), ok([])],
      { maxDelayMs: 5000 },
    );
    const result = await client.listPets();
    expect(result.status).toBe(429);
    expect(result.body).toMatchObject({ code: 'api_key_banned' });
    expect(events).toHaveLength(0);
    expect(peer.requests).toHaveLength(1);
  });

  it('waits a Retry-After equal to maxDelayMs', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { client, events } = await clientFor([error(429, 'rate_limit_exceeded', { 'Retry-After': '5' }), ok([])], {
      maxDelayMs: 5000,
    });
    const call = client.listPets();
    await until(() => events.length === 1);
    expect(events[0]?.delayMs).toBe(5000);
    await vi.advanceTimersByTimeAsync(5000);
    expect((await call).status).toBe(200);
  });

  it('gives the 429 back, typed, once maxRetries is spent', async () => {
    const { client, peer } = await clientFor([error(429, 'rate_limit_exceeded', { 'Retry-After': '0' })], {
      maxRetries: 2,
    });
    const result = await client.listPets();
    expect(result.status).toBe(429);
    if (result.status !== 429) throw new Error('unreachable');
    expect(result.body.code).toBe('rate_limit_exceeded');
    expect(result.headers.get('retry-after')).toBe('0');
    expect(peer.requests).toHaveLength(3);
  });

  it('backs off exponentially with full jitter on 503, 502 and 504 for GET', async () => {
    const random = vi.fn(() => 0.5);
    const { client, events, peer } = await clientFor(
      [error(503, 'service_unavailable'), { status: 502, body: 'bad gateway' }, { status: 504 }, ok([rex])],
      { baseDelayMs: 20, maxDelayMs: 60, random },
    );
    const result = await client.listPets();
    expect(result.status).toBe(200);
    expect(peer.requests).toHaveLength(4);
    // ceilings 20, 40, 80 -> capped at 60; half of each with random() = 0.5
    expect(events.map((e) => [e.status, e.delayMs])).toEqual([
      [503, 10],
      [502, 20],
      [504, 30],
    ]);
    expect(random).toHaveBeenCalledTimes(3);
  });

  it('never retries 401 or other 4xx', async () => {
    const { client, peer, events } = await clientFor([
      error(401, 'unauthorized'),
      error(404, 'not_found'),
      error(400, 'invalid_request'),
    ]);
    const unauthorized = await client.listPets();
    expect(unauthorized.status).toBe(401);
    if (unauthorized.status !== 401) throw new Error('unreachable');
    expect(unauthorized.body).toEqual({ code: 'unauthorized', message: 'unauthorized happened', status: 401 });
    expect((await client.getPet({ params: { petId: 7 } })).status).toBe(404);
    expect((await client.createPet({ body: { name: 'Rex', categoryId: 1 } })).status).toBe(400);
    expect(peer.requests).toHaveLength(3);
    expect(events).toEqual([]);
  });

  it('retries a POST after 429, 503, 502, 504 and 409 key-in-use, always with the same Idempotency-Key', async () => {
    const { client, peer, events } = await clientFor(
      [
        error(429, 'rate_limit_exceeded', { 'Retry-After': '0' }),
        error(503, 'service_unavailable'),
        { status: 502 },
        { status: 504 },
        error(409, 'idempotency_key_in_use', { 'Retry-After': '0' }),
        { status: 201, body: rex },
        { status: 201, body: rex },
      ],
      { maxRetries: 5 },
    );
    expect((await client.createPet({ body: { name: 'Rex', categoryId: 3 } })).status).toBe(201);
    expect(peer.requests).toHaveLength(6);
    expect(peer.requests.every((r) => r.body === '{"name":"Rex","categoryId":3}')).toBe(true);
    const key = peer.requests[0]?.headers['idempotency-key'];
    expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(peer.requests.every((r) => r.headers['idempotency-key'] === key)).toBe(true);
    expect(events.map((e) => e.reason)).toEqual([
      'rate-limited',
      'unavailable',
      'unavailable',
      'unavailable',
      'key-in-use',
    ]);
    // Another call is another pet: a new key.
    await client.createPet({ body: { name: 'Rex', categoryId: 3 } });
    expect(peer.requests[6]?.headers['idempotency-key']).not.toBe(key);
  });

  it("keeps a caller's own Idempotency-Key, and does not retry a 422 (the key was used for another body)", async () => {
    const { client, peer } = await clientFor([error(422, 'idempotency_key_reused')]);
    const result = await client.createPet({
      body: { name: 'Rex', categoryId: 3 },
      headers: { 'idempotency-key': 'order-17' },
    });
    expect(result.status).toBe(422);
    expect(peer.requests).toHaveLength(1);
    expect(peer.requests[0]?.headers['idempotency-key']).toBe('order-17');
  });
});

describe('network errors', () => {
  it('retries a GET whose connection was dropped', async () => {
    const { client, events, peer } = await clientFor(['hang-up', 'hang-up', ok([rex])]);
    const result = await client.listPets();
    expect(result.body).toEqual([rex]);
    expect(peer.requests).toHaveLength(3);
    expect(events.map((e) => e.reason)).toEqual(['network-error', 'network-error']);
  });

  it('retries a POST whose connection dropped after sending, with the same Idempotency-Key (no second pet)', async () => {
    const { client, peer, events } = await clientFor(['hang-up', { status: 201, body: rex }]);
    const result = await client.createPet({ body: { name: 'Rex', categoryId: 3 } });
    expect(result.status).toBe(201);
    expect(peer.requests).toHaveLength(2);
    expect(peer.requests[1]?.headers['idempotency-key']).toBe(peer.requests[0]?.headers['idempotency-key']);
    expect(events.map((e) => e.reason)).toEqual(['network-error']);
  });

  it('gives up on a POST whose connection keeps dropping after maxRetries, naming the attempts', async () => {
    const { client, peer } = await clientFor(['hang-up', 'hang-up', 'hang-up', 'hang-up']);
    const failure = await client.createPet({ body: { name: 'Rex', categoryId: 3 } }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(AnimalStoreNetworkError);
    expect(String((failure as Error).message)).toContain(`POST ${peer.origin}/v1/pets failed after`);
    expect(new Set(peer.requests.map((r) => r.headers['idempotency-key'])).size).toBe(1);
  });

  it('retries even a POST when the connection was refused, then reports the failure without the key', async () => {
    const port = await closedPort();
    const events: RetryEvent[] = [];
    const client = createAnimalStoreClient({
      baseUrl: `http://127.0.0.1:${port}/v1`,
      apiKey: API_KEY,
      retry: { maxRetries: 2, baseDelayMs: 1, onRetry: (event) => events.push(event) },
    });
    const failure = await client.createPet({ body: { name: 'Rex', categoryId: 3 } }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(AnimalStoreNetworkError);
    const message = String((failure as Error).message);
    expect(message).toContain('failed after 3 attempts');
    expect(message).toContain('ECONNREFUSED');
    expect(events.map((e) => e.errorCode)).toEqual(['ECONNREFUSED', 'ECONNREFUSED']);
    for (const text of [message, String((failure as Error).stack), JSON.stringify(events)])
      expect(text).not.toContain(API_KEY);
  });
});

describe('cancellation', () => {
  it('an abort during a retry wait rejects at once and sends nothing more', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { client, events, peer } = await clientFor([
      error(503, 'service_unavailable', { 'Retry-After': '20' }),
      ok([]),
    ]);
    const controller = new AbortController();
    const call = client.listPets({ fetchOptions: { signal: controller.signal } });
    await until(() => events.length === 1);
    expect(events[0]?.delayMs).toBe(20_000);
    controller.abort();
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(peer.requests).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('an already aborted signal sends nothing', async () => {
    const { client, peer } = await clientFor([ok([])]);
    await expect(client.listPets({ fetchOptions: { signal: AbortSignal.abort() } })).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(peer.requests).toHaveLength(0);
  });
});

describe('paginatePets', () => {
  const pets = Array.from({ length: 5 }, (_, i) => ({
    id: i + 1,
    name: `Pet ${i + 1}`,
    categoryId: 3000000000 + i,
    status: 'sold',
  }));

  it('follows rel="next" through every page, relative or absolute, among other links', async () => {
    peer = await startPeer((request) => {
      const url = new URL(request.url, 'http://peer');
      switch (url.searchParams.get('cursor')) {
        case null:
          return ok(pets.slice(0, 2), { Link: '</v1/pets?cursor=a%2Cb&limit=2&status=sold>; rel="next"' });
        case 'a,b':
          return ok(pets.slice(2, 4), {
            Link: `</v1/pets>; rel="first", <${peer!.origin}/v1/pets?cursor=c;d&limit=2&status=sold>; title="a, b; c"; REL="prev NEXT"`,
          });
        default:
          return ok(pets.slice(4), { Link: '</v1/pets>; rel="first"' });
      }
    });
    const client = createAnimalStoreClient({ baseUrl: peer.baseUrl, apiKey: API_KEY });
    const seen = [];
    for await (const pet of client.paginatePets({ status: 'sold', pageSize: 2 })) seen.push(pet);
    expect(seen).toEqual(pets);
    expect(peer.requests.map((r) => r.url)).toEqual([
      '/v1/pets?status=sold&limit=2',
      '/v1/pets?cursor=a%2Cb&limit=2&status=sold',
      '/v1/pets?cursor=c;d&limit=2&status=sold',
    ]);
    expect(peer.requests.every((r) => r.headers.authorization === `Bearer ${API_KEY}`)).toBe(true);
  });

  it('stops early when the caller breaks out', async () => {
    const { client, peer } = await clientFor([ok(pets.slice(0, 2), { Link: '</v1/pets?cursor=x>; rel="next"' })]);
    for await (const pet of client.paginatePets()) {
      expect(pet.id).toBe(1);
      break;
    }
    expect(peer.requests).toHaveLength(1);
  });

  it('throws the Error body of a failed page', async () => {
    const { client } = await clientFor([
      ok(pets.slice(0, 1), { Link: '</v1/pets?cursor=x>; rel="next"' }),
      error(401, 'unauthorized'),
    ]);
    const seen: unknown[] = [];
    const failure = await (async () => {
      for await (const pet of client.paginatePets()) seen.push(pet);
    })().catch((e: unknown) => e);
    expect(seen).toHaveLength(1);
    expect(failure).toBeInstanceOf(AnimalStoreResponseError);
    expect(failure).toMatchObject({ status: 401, code: 'unauthorized' });
  });

  it.each([
    ['to another origin', '<http://127.0.0.2:1/v1/pets?cursor=x>; rel="next"', /another origin/],
    ['in a loop', '</v1/pets>; rel="next"', /pagination loops/],
  ])('refuses to follow a link %s', async (_case, link, message) => {
    const { client, peer } = await clientFor([ok([rex], { Link: link })]);
    const seen: unknown[] = [];
    const failure = await (async () => {
      for await (const pet of client.paginatePets()) seen.push(pet);
    })().catch((e: unknown) => e);
    expect(seen).toEqual([rex]);
    expect(failure).toBeInstanceOf(AnimalStoreError);
    expect(String((failure as Error).message)).toMatch(message);
    expect(peer.requests).toHaveLength(1);
  });
});

describe('deprecation', () => {
  const WARNED = Symbol.for('@animal-store/client.deprecations-warned');
  beforeEach(() => {
    delete (globalThis as Record<symbol, unknown>)[WARNED];
  });

  it('getPet warns once per process, naming the sunset date and the replacement', async () => {
    peer = await startPeer([ok(rex)]);
    const notices: DeprecationNotice[] = [];
    const onDeprecation = (notice: DeprecationNotice) => notices.push(notice);
    const first = createAnimalStoreClient({ baseUrl: peer.baseUrl, apiKey: API_KEY, onDeprecation });
    const second = createAnimalStoreClient({ baseUrl: peer.baseUrl, apiKey: API_KEY, onDeprecation });
    await first.listPets();
    await first.createPet({ body: { name: 'Rex', categoryId: 3 } });
    expect(notices).toHaveLength(0);
    await first.getPet({ params: { petId: 1 } });
    await first.getPet({ params: { petId: 1 } });
    await second.getPet({ params: { petId: 1 } });
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({
      operation: 'getPet',
      method: 'GET',
      path: '/v1/pets/:petId',
      sunset: GET_PET_DEPRECATION.sunsetAt,
    });
    expect(notices[0]?.message).toContain('2030-12-05');
    expect(notices[0]?.message).toContain(`GET ${GET_PET_DEPRECATION.successorPath}`);
  });

  it('falls back to console.warn', async () => {
    peer = await startPeer([ok(rex)]);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const client = createAnimalStoreClient({ baseUrl: peer.baseUrl, apiKey: API_KEY });
      await client.getPet({ params: { petId: 1 } });
      await client.getPet({ params: { petId: 1 } });
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]?.[0])).toMatch(/getPet .*deprecated.*2030-12-05/);
      expect(String(warn.mock.calls[0]?.[0])).not.toContain(API_KEY);
    } finally {
      warn.mockRestore();
    }
  });
});

describe('conditional-request cache', () => {
  it('revalidates with If-None-Match and turns a 304 into the remembered 200', async () => {
    peer = await startPeer([
      ok([rex], { ETag: '"v1"', Link: '</v1/pets?cursor=x>; rel="next"' }),
      {
        status: 304,
        headers: {
          ETag: '"v1"',
          'X-RateLimit-Limit': '60',
          'X-RateLimit-Remaining': '7',
          'X-RateLimit-Reset': '1900000999',
        },
      },
      ok([], { ETag: '"v2"' }),
    ]);
    const cached = createAnimalStoreClient({ baseUrl: peer.baseUrl, apiKey: API_KEY, cache: true });
    const first = await cached.listPets();
    const second = await cached.listPets();
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.body).not.toBe(first.body);
    expect(second.headers.get('link')).toBe('</v1/pets?cursor=x>; rel="next"');
    expect(second.headers.get('x-ratelimit-remaining')).toBe('7');
    expect(cached.rateLimit?.remaining).toBe(7);
    const third = await cached.listPets();
    expect(third.body).toEqual([]);
    expect(peer.requests.map((r) => r.headers['if-none-match'])).toEqual([undefined, '"v1"', '"v1"']);
  });

  it('is off by default', async () => {
    const { client, peer } = await clientFor([ok([rex], { ETag: '"v1"' })]);
    await client.listPets();
    await client.listPets();
    expect(peer.requests.map((r) => r.headers['if-none-match'])).toEqual([undefined, undefined]);
  });
});
