/** Backoff after Retry-After and the retry budget: the rules alone, then a client against real HTTP servers. */
import { afterEach, describe, expect, it } from 'vitest';
import { createAnimalStoreClient } from './client.js';
import { AnimalStoreNetworkError } from './errors.js';
import { createRetryBudget, type RetryEvent, type RetryOptions, retryDelay, retryPolicy } from './retry.js';
import { type Peer, type PeerReply, RATE_HEADERS, startPeer } from './test-support/peer.js';
import { startRealServer } from './test-support/server.js';

const API_KEY = 'ask_test_secret_0123456789';

/** A clock the test moves by hand. */
function manualClock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

describe('retryDelay', () => {
  it('waits Retry-After plus full jitter, capped at maxDelayMs', () => {
    const policy = retryPolicy({ baseDelayMs: 100, maxDelayMs: 5000, random: () => 0.5 });
    expect(retryDelay(policy, 1, 2000)).toBe(2050);
    expect(retryDelay(policy, 3, 2000)).toBe(2200);
    expect(retryDelay(policy, 1, 4990)).toBe(5000);
    expect(retryDelay(policy, 1, 5000)).toBe(5000);
    expect(retryDelay(policy, 1, 5001)).toBeUndefined();
    expect(retryDelay(retryPolicy({ baseDelayMs: 100, random: () => 0 }), 1, 1000)).toBe(1000);
  });

  it('without Retry-After, a uniform wait below the doubling ceiling', () => {
    const policy = retryPolicy({ baseDelayMs: 100, maxDelayMs: 300, random: () => 0.999 });
    expect([1, 2, 3, 4].map((retry) => retryDelay(policy, retry, undefined))).toEqual([99, 199, 299, 299]);
  });
});

describe('createRetryBudget', () => {
  it('allows ratio x calls in the window plus the reserve, and refuses without taking anything', () => {
    const clock = manualClock();
    const budget = createRetryBudget({ ratio: 0.1, minPerSecond: 0, windowMs: 10_000 }, clock.now);
    expect(budget.tryWithdraw()).toBe(false);
    for (let i = 0; i < 25; i++) budget.deposit();
    expect(budget.available()).toBe(2);
    expect(budget.tryWithdraw()).toBe(true);
    expect(budget.tryWithdraw()).toBe(true);
    expect(budget.tryWithdraw()).toBe(false);
    expect(budget.available()).toBe(0);
    for (let i = 0; i < 5; i++) budget.deposit();
    expect(budget.tryWithdraw()).toBe(true);
  });

  it('forgets calls and retries older than the window, slice by slice', () => {
    const clock = manualClock(0);
    const budget = createRetryBudget({ ratio: 0.5, minPerSecond: 0, windowMs: 10_000 }, clock.now);
    for (let i = 0; i < 4; i++) budget.deposit(); // t = 0: worth 2 retries
    clock.advance(5000);
    for (let i = 0; i < 4; i++) budget.deposit(); // t = 5 s: 2 more
    expect(budget.tryWithdraw()).toBe(true); // t = 5 s
    expect(budget.available()).toBe(3);
    clock.advance(5000); // t = 10 s: the calls of t = 0 left the window
    expect(budget.available()).toBe(1);
    clock.advance(5000); // t = 15 s: the rest too, with the retry taken at t = 5 s
    expect(budget.available()).toBe(0);
  });

  it('keeps a reserve of minPerSecond x window seconds for a quiet client', () => {
    const clock = manualClock();
    const budget = createRetryBudget({ ratio: 0.1, minPerSecond: 1, windowMs: 5000 }, clock.now);
    expect(budget.available()).toBe(5);
    for (let i = 0; i < 5; i++) expect(budget.tryWithdraw()).toBe(true);
    expect(budget.tryWithdraw()).toBe(false);
    clock.advance(5000);
    expect(budget.available()).toBe(5);
  });

  it('refuses settings that make no budget', () => {
    expect(() => createRetryBudget({ ratio: -0.1 })).toThrow(RangeError);
    expect(() => createRetryBudget({ minPerSecond: Number.NaN })).toThrow(RangeError);
    expect(() => createRetryBudget({ windowMs: 500 })).toThrow(RangeError);
    expect(() => createRetryBudget({ windowMs: 120_000 })).toThrow(RangeError);
  });
});

const unavailable: PeerReply = {
  status: 503,
  body: { code: 'service_unavailable', message: 'overloaded', status: 503 },
  headers: { ...RATE_HEADERS, 'Retry-After': '0' },
};

let peer: Peer | undefined;
afterEach(async () => {
  await peer?.close();
  peer = undefined;
});

describe('a client spending its retry budget', () => {
  it('retries a 503 while the budget lasts, then returns the 503 at once', async () => {
    let failing = false;
    peer = await startPeer(() => (failing ? unavailable : { status: 200, body: [], headers: RATE_HEADERS }));
    const clock = manualClock();
    const retried: RetryEvent[] = [];
    const refused: Omit<RetryEvent, 'delayMs'>[] = [];
    const retry: RetryOptions = {
      maxRetries: 3,
      random: () => 0,
      now: clock.now,
      budget: { ratio: 0.1, minPerSecond: 0, windowMs: 10_000 },
      onRetry: (event) => retried.push(event),
      onBudgetExhausted: (event) => refused.push(event),
    };
    const client = createAnimalStoreClient({ baseUrl: peer.baseUrl, apiKey: API_KEY, retry });
    for (let i = 0; i < 20; i++) expect((await client.listPets()).status).toBe(200);

    failing = true;
    const sentBefore = peer.requests.length;
    // 21 calls in the window are worth two retries: the first failing call spends them, then gives up.
    expect((await client.listPets()).status).toBe(503);
    expect(peer.requests.length - sentBefore).toBe(3);
    expect(retried.map((e) => e.retry)).toEqual([1, 2]);
    expect(refused).toEqual([
      { method: 'GET', url: `${peer.origin}/v1/pets`, retry: 3, reason: 'unavailable', status: 503 },
    ]);
    // Later calls are answered after one attempt, until the window forgets the retries.
    expect((await client.listPets()).status).toBe(503);
    expect(peer.requests.length - sentBefore).toBe(4);

    clock.advance(10_000);
    failing = false;
    for (let i = 0; i < 10; i++) await client.listPets();
    failing = true;
    const sentThen = peer.requests.length;
    expect((await client.listPets()).status).toBe(503);
    expect(peer.requests.length - sentThen).toBe(2);
  });

  it('with budget: false, retries up to maxRetries whatever the ratio', async () => {
    peer = await startPeer([unavailable]);
    const client = createAnimalStoreClient({
      baseUrl: peer.baseUrl,
      apiKey: API_KEY,
      retry: { maxRetries: 4, random: () => 0, budget: false },
    });
    expect((await client.listPets()).status).toBe(503);
    expect(peer.requests).toHaveLength(5);
  });

  it('shares one budget between clients given the same budget', async () => {
    peer = await startPeer([unavailable]);
    const clock = manualClock();
    const budget = createRetryBudget({ ratio: 0, minPerSecond: 0.2, windowMs: 10_000 }, clock.now);
    const options = { baseUrl: peer.baseUrl, retry: { maxRetries: 5, random: () => 0, budget } };
    const first = createAnimalStoreClient({ ...options, apiKey: API_KEY });
    const second = createAnimalStoreClient({ ...options, apiKey: `${API_KEY}_2` });
    await first.listPets();
    await second.listPets();
    // A reserve of two retries for both together: the first client's call takes both (3 attempts), the second's none.
    expect(peer.requests).toHaveLength(4);
  });
});

describe('against the real server', () => {
  it('a stopped server: retries while the budget lasts, then throws at once naming the spent budget', async () => {
    const server = await startRealServer();
    const clock = manualClock();
    const client = createAnimalStoreClient({
      baseUrl: server.baseUrl,
      apiKey: server.apiKey,
      retry: { maxRetries: 3, random: () => 0, now: clock.now, budget: { ratio: 0.1, minPerSecond: 0 } },
    });
    try {
      for (let i = 0; i < 10; i++) expect((await client.listPets()).status).toBe(200);
    } finally {
      await server.stop();
    }
    // 11 calls in the window are worth one retry: two attempts, then the error.
    const first = await client.listPets().catch((error: unknown) => error);
    expect(first).toBeInstanceOf(AnimalStoreNetworkError);
    expect(first).toMatchObject({ attempts: 2, budgetSpent: true });
    expect(String((first as Error).message)).toContain('not retried: the retry budget is spent');
    expect(String((first as Error).message)).toContain('ECONNREFUSED');
    const second = await client.listPets().catch((error: unknown) => error);
    expect(second).toMatchObject({ attempts: 1, budgetSpent: true });
    // The window forgets the retry and the calls alike: a lone call is worth a tenth of a retry, so none.
    clock.advance(10_000);
    const later = await client.listPets().catch((error: unknown) => error);
    expect(later).toMatchObject({ attempts: 1, budgetSpent: true });
  }, 60_000);
});
