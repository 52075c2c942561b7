// Middleware tests with a real express app on 127.0.0.1 and the global fetch.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TEST_BAN } from './test-utils/ban.js';
import { RateLimitStoreUnavailableError } from './errors.js';
import { rateLimit, type RateLimitMiddlewareOptions } from './middleware.js';
import { createLimiter, type RateLimitDecision } from './limiter.js';
import { createMemoryStore } from './memory-store.js';
import { DAY_MS, MINUTE_MS, minuteAndDay } from './windows.js';
import { createResilientStore } from './resilient-store.js';
import type { RateLimitStore, WindowLimit } from './types.js';

/** The lifecycle methods of a store that holds nothing. */
const inert = { refund: () => Promise.resolve(), resetKey: () => Promise.resolve(), close: () => Promise.resolve() };

const NOW = Date.UTC(2024, 4, 15, 12, 30, 20, 500);
const MINUTE_RESET_S = Date.UTC(2024, 4, 15, 12, 31) / 1000;
const DAY_RESET_S = Date.UTC(2024, 4, 16) / 1000;
/** Free plan's windows: 60 a minute, 1000 a day. */
const FREE = minuteAndDay({ perMinute: 60, perDay: 1000 });
const TIGHT: WindowLimit[] = [
  { name: 'minute', limit: 2, windowMs: MINUTE_MS },
  { name: 'day', limit: 10, windowMs: DAY_MS },
];

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

type Options = Partial<RateLimitMiddlewareOptions<Request, express.Response>>;

async function start(
  options: Options = {},
  store: RateLimitStore = createMemoryStore({ now: () => NOW }),
): Promise<string> {
  const app = express();
  const limiter = createLimiter({ store, ban: TEST_BAN });
  app.get('/healthz', (_req, res) => {
    res.json({ ok: true });
  });
  app.use(
    rateLimit({
      limiter,
      identify: (req: Request) => {
        const key = req.header('x-api-key');
        return key ? { key, windows: TIGHT } : { key: `ip:${req.socket.remoteAddress}`, windows: FREE };
      },
      skip: (req) => req.path === '/skipped',
      ...options,
    }),
  );
  app.get('/ok', (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/skipped', (_req, res) => {
    res.json({ skipped: true });
  });
  app.get('/boom', (_req, _res, next) => {
    next(new Error('boom'));
  });
  const onError: ErrorRequestHandler = (err: { status?: number; code?: string }, _req, res, _next) => {
    res.status(err.status ?? 500).json({ code: err.code ?? 'internal_error' });
  };
  app.use(onError);
  server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server!.once('listening', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const LIMIT_HEADERS = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'ratelimit-policy',
  'ratelimit',
  'retry-after',
] as const;

/** An answer's rate-limit headers by name, null where absent: one assertion names what a client reads. */
function limitHeaders(res: Response): Record<(typeof LIMIT_HEADERS)[number], string | null> {
  return Object.fromEntries(LIMIT_HEADERS.map((name) => [name, res.headers.get(name)])) as Record<
    (typeof LIMIT_HEADERS)[number],
    string | null
  >;
}

describe('rateLimit middleware', () => {
  it('sets legacy and IETF draft headers on a 200', async () => {
    const base = await start();
    const res = await fetch(`${base}/ok`, { headers: { 'x-api-key': 'k1' } });
    expect(res.status).toBe(200);
    expect(limitHeaders(res)).toEqual({
      'x-ratelimit-limit': '2',
      'x-ratelimit-remaining': '1',
      'x-ratelimit-reset': String(MINUTE_RESET_S),
      'ratelimit-policy': '"minute";q=2;w=60, "day";q=10;w=86400',
      ratelimit: `"minute";r=1;t=40, "day";r=9;t=${DAY_RESET_S - Math.floor(NOW / 1000)}`,
      'retry-after': null,
    });
  });

  it('keeps the headers on errors produced downstream (404 and 500)', async () => {
    const base = await start();
    const missing = await fetch(`${base}/nope`, { headers: { 'x-api-key': 'k2' } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('x-ratelimit-remaining')).toBe('1');
    expect(missing.headers.get('ratelimit-policy')).toContain('"minute";q=2;w=60');
    const boom = await fetch(`${base}/boom`, { headers: { 'x-api-key': 'k2' } });
    expect(boom.status).toBe(500);
    expect(boom.headers.get('x-ratelimit-remaining')).toBe('0');
  });

  it('answers 429 with a JSON error body, Retry-After and remaining 0', async () => {
    const base = await start();
    await fetch(`${base}/ok`, { headers: { 'x-api-key': 'k3' } });
    await fetch(`${base}/ok`, { headers: { 'x-api-key': 'k3' } });
    const res = await fetch(`${base}/ok`, { headers: { 'x-api-key': 'k3' } });
    expect(res.status).toBe(429);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(limitHeaders(res)).toMatchObject({
      'retry-after': '40',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-limit': '2',
      'x-ratelimit-reset': String(MINUTE_RESET_S),
    });
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({ code: 'rate_limit_exceeded', message: expect.any(String), status: 429 });
    expect(body['message']).toContain('2 requests per minute');
  });

  it('bans on the 11th refusal with api_key_banned and the ban’s Retry-After; hooks see it', async () => {
    const onBan = vi.fn();
    const decisions: RateLimitDecision[] = [];
    const base = await start({ hooks: { onBan, onDecision: (d) => decisions.push(d) } });
    const codes: string[] = [];
    for (let i = 0; i < 14; i++) {
      const res = await fetch(`${base}/ok`, { headers: { 'x-api-key': 'k4' } });
      codes.push(res.status === 200 ? 'ok' : ((await res.json()) as { code: string }).code);
      if (i === 12) {
        expect(res.status).toBe(429);
        expect(res.headers.get('retry-after')).toBe('900');
        expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
        expect(res.headers.get('x-ratelimit-reset')).toBe(String(Math.ceil((NOW + 900_000) / 1000)));
        expect(res.headers.get('ratelimit')).toMatch(/^"minute";r=0;t=900, "day";r=0;t=\d+$/);
      }
    }
    expect(codes).toEqual([
      'ok',
      'ok',
      ...Array<string>(10).fill('rate_limit_exceeded'),
      'api_key_banned',
      'api_key_banned',
    ]);
    expect(onBan).toHaveBeenCalledTimes(1);
    expect(onBan.mock.calls[0]![0]).toBe('k4');
    expect(decisions).toHaveLength(14);
  });

  it('identifies anonymous callers by IP with free limits', async () => {
    const base = await start();
    const res = await fetch(`${base}/ok`);
    expect(res.headers.get('x-ratelimit-limit')).toBe('60');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('59');
  });

  it('skip() bypasses the limiter (no headers, nothing charged)', async () => {
    const base = await start();
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${base}/skipped`, { headers: { 'x-api-key': 'k5' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    }
    const counted = await fetch(`${base}/ok`, { headers: { 'x-api-key': 'k5' } });
    expect(counted.headers.get('x-ratelimit-remaining')).toBe('1');
  });

  it('passes identify errors and store outages (refuse mode -> 503) to next(err)', async () => {
    const base = await start({
      identify: () => {
        throw Object.assign(new Error('bad key'), { status: 401, code: 'unauthorized' });
      },
    });
    const res = await fetch(`${base}/ok`);
    expect(res.status).toBe(401);
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    await new Promise<void>((resolve) => server!.close(() => resolve()));

    const broken: RateLimitStore = {
      name: 'broken',
      consume: () => Promise.reject(new Error('ECONNREFUSED')),
      ...inert,
    };
    const base2 = await start({}, createResilientStore({ primary: broken, mode: 'refuse' }));
    const res2 = await fetch(`${base2}/ok`);
    expect(res2.status).toBe(503);
    expect(await res2.json()).toEqual({ code: 'service_unavailable' });
    expect(new RateLimitStoreUnavailableError()).toMatchObject({ status: 503, code: 'service_unavailable' });
  });

  it('reports fallback decisions to hooks.onFallback and still limits', async () => {
    const onFallback = vi.fn();
    const broken: RateLimitStore = {
      name: 'broken',
      consume: () => Promise.reject(new Error('ECONNREFUSED')),
      ...inert,
    };
    const store = createResilientStore({
      primary: broken,
      mode: 'fallback',
      fallback: createMemoryStore({ now: () => NOW }),
    });
    const base = await start({ hooks: { onFallback } }, store);
    const res = await fetch(`${base}/ok`, { headers: { 'x-api-key': 'k6' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-remaining')).toBe('1');
    expect(onFallback).toHaveBeenCalledTimes(1);
    expect(String(onFallback.mock.calls[0]![0])).toContain('ECONNREFUSED');
  });

  it('onRefused replaces the default 429 response', async () => {
    const base = await start({
      onRefused: (_req, res, _next, decision) => {
        res.status(429).type('text/plain').send(`slow down ${decision.retryAfterSeconds}`);
      },
    });
    await fetch(`${base}/ok`, { headers: { 'x-api-key': 'k7' } });
    await fetch(`${base}/ok`, { headers: { 'x-api-key': 'k7' } });
    const res = await fetch(`${base}/ok`, { headers: { 'x-api-key': 'k7' } });
    expect(res.status).toBe(429);
    expect(await res.text()).toBe('slow down 40');
    expect(res.headers.get('retry-after')).toBe('40');
  });
});

describe('rateLimit middleware without skip (synchronous decisions)', () => {
  it('answers from a store with consumeSync without a promise: next() runs before the middleware returns', () => {
    const store = createMemoryStore({ now: () => NOW });
    const consume = vi.spyOn(store, 'consume');
    const middleware = rateLimit({
      limiter: createLimiter({ store, ban: TEST_BAN }),
      identify: () => ({ key: 'sync', windows: TIGHT }),
    });
    const headers = new Map<string, unknown>();
    const res = { headersSent: false, setHeader: (name: string, value: unknown) => headers.set(name, value) };
    const next = vi.fn();
    middleware({} as never, res as never, next);
    expect(next).toHaveBeenCalledTimes(1);
    expect(next).toHaveBeenCalledWith();
    expect(consume).not.toHaveBeenCalled();
    expect(headers.get('X-RateLimit-Remaining')).toBe('1');
    expect(headers.get('RateLimit')).toBe('"minute";r=1;t=40, "day";r=9;t=41380');
  });

  it('gives the same headers, 429 and Retry-After as the promise path, for sync and async identities alike', async () => {
    for (const identify of [
      (req: Request) => ({ key: String(req.header('x-api-key')), windows: TIGHT }),
      async (req: Request) => ({ key: String(req.header('x-api-key')), windows: TIGHT }),
    ]) {
      const base = await start({ skip: undefined, identify });
      const first = await fetch(`${base}/ok`, { headers: { 'x-api-key': 'same' } });
      expect(first.status).toBe(200);
      expect(first.headers.get('x-ratelimit-remaining')).toBe('1');
      expect(first.headers.get('x-ratelimit-reset')).toBe(String(MINUTE_RESET_S));
      await fetch(`${base}/ok`, { headers: { 'x-api-key': 'same' } });
      const refused = await fetch(`${base}/ok`, { headers: { 'x-api-key': 'same' } });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('40');
      expect(await refused.json()).toMatchObject({ code: 'rate_limit_exceeded', status: 429 });
      const downstream = await fetch(`${base}/boom`, { headers: { 'x-api-key': 'other' } });
      expect(downstream.status).toBe(500);
      expect(downstream.headers.get('x-ratelimit-remaining')).toBe('1');
      await new Promise<void>((resolve) => server!.close(() => resolve()));
      server = undefined;
    }
  });

  it('passes errors of identify (thrown or rejected) and of the store to next(err)', async () => {
    const thrown = Object.assign(new Error('bad key'), { status: 401, code: 'unauthorized' });
    for (const identify of [
      () => {
        throw thrown;
      },
      () => Promise.reject(thrown),
    ]) {
      const base = await start({ skip: undefined, identify });
      const res = await fetch(`${base}/ok`);
      expect(res.status).toBe(401);
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
      await new Promise<void>((resolve) => server!.close(() => resolve()));
      server = undefined;
    }
    const base = await start({ skip: undefined, identify: () => ({ key: 'k', windows: [] }) });
    expect((await fetch(`${base}/ok`)).status).toBe(500); // RangeError from the limiter: no windows
  });
});

describe('types', () => {
  it('is assignable to an Express RequestHandler', () => {
    const handler: RequestHandler = rateLimit({
      limiter: createLimiter({ store: createMemoryStore(), ban: TEST_BAN }),
      identify: (req: Request) => ({ key: req.ip ?? 'unknown', windows: FREE }),
    });
    expect(handler).toBeTypeOf('function');
  });
});
