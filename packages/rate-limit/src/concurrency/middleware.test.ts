// The concurrency middleware in real express apps on 127.0.0.1: every way a request ends gives its slot back.
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler, type Request } from 'express';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connect, deletePrefix, testPrefix } from '../test-utils/redis.js';
import { type ConcurrencyLimiter, createConcurrencyLimiter } from './limiter.js';
import { createMemoryConcurrencyStore } from './memory-store.js';
import { concurrencyLimit } from './middleware.js';
import { createRedisConcurrencyStore } from './redis-store.js';
import type { ConcurrencyStore } from './types.js';

const servers: Server[] = [];
const redisClients: Redis[] = [];
const prefix = testPrefix();
afterEach(async () => {
  for (const gate of gates.splice(0)) gate();
  await Promise.all(
    servers.splice(0).map((s) => new Promise<void>((resolve) => (s.closeAllConnections(), s.close(() => resolve())))),
  );
});
beforeAll(async () => {
  redisClients.push(await connect(), await connect());
});
afterAll(async () => {
  await deletePrefix(redisClients[0]!, prefix);
  for (const client of redisClients) client.disconnect();
});

/** Requests waiting in `/hold` until the test lets them answer. */
const gates: (() => void)[] = [];

interface App {
  origin: string;
  limiter: ConcurrencyLimiter;
  server: Server;
  /** Requests that reached a handler. */
  handled: number;
}

async function start(store: ConcurrencyStore = createMemoryConcurrencyStore(), limit = 2): Promise<App> {
  const app = express();
  const limiter = createConcurrencyLimiter({ store });
  const state: App = { origin: '', limiter, server: undefined as unknown as Server, handled: 0 };
  app.use(
    concurrencyLimit({
      limiter,
      identify: (req: Request) => {
        const key = req.header('x-key');
        return key ? { key, limit } : undefined;
      },
      onRefused: (_req, res, _next, decision) => {
        res.status(429).set('Retry-After', '1').json({ code: 'concurrency_limit_exceeded', limit: decision.limit });
      },
    }),
  );
  app.use((_req, _res, next) => {
    state.handled++;
    next();
  });
  app.get('/hold', (_req, res) => void gates.push(() => res.json({ ok: true })));
  app.get('/ok', (_req, res) => void res.json({ ok: true }));
  app.get('/boom', (_req, _res, next) => next(new Error('boom')));
  app.get('/throws', () => {
    throw new Error('thrown');
  });
  const onError: ErrorRequestHandler = (_err, _req, res, _next) => void res.status(500).json({ code: 'internal' });
  app.use(onError);
  const server = http.createServer(app).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  servers.push(server);
  return Object.assign(state, { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
}

/** The identity's requests in flight (an acquire with limit 0 takes nothing and counts them). */
async function inFlight(app: App, key: string): Promise<number> {
  return (await app.limiter.acquire(key, 0)).inFlight;
}

/** Lets real I/O run until `condition` holds; bounded by turns, not by time. */
async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`never happened: ${what}`);
}

const get = (app: App, path: string, key = 'k') => fetch(`${app.origin}${path}`, { headers: { 'x-key': key } });

/** A request on a connection of its own, which `hangUp()` destroys at once (a client that goes away). */
function openRequest(app: App, path: string, key = 'k') {
  const request = http.get(`${app.origin}${path}`, { headers: { 'x-key': key }, agent: false });
  const ended = new Promise<unknown>((resolve) => {
    request.on('response', resolve);
    request.on('error', resolve);
  });
  return { ended, hangUp: () => request.destroy() };
}

describe('concurrencyLimit', () => {
  it('admits up to the limit in flight and refuses the excess with the server’s answer', async () => {
    const app = await start();
    const held = [get(app, '/hold'), get(app, '/hold')];
    await until(() => gates.length === 2, 'two requests held');
    const refused = await get(app, '/ok');
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({ code: 'concurrency_limit_exceeded', limit: 2 });
    expect((await get(app, '/ok', 'another key')).status).toBe(200);
    for (const gate of gates.splice(0)) gate();
    expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200]);
    await until(async () => (await inFlight(app, 'k')) === 0, 'slots given back');
    expect((await get(app, '/ok')).status).toBe(200);
  });

  it('gives the slot back after a success, an error passed on and an error thrown', async () => {
    const app = await start(createMemoryConcurrencyStore(), 1);
    for (const [path, status] of [
      ['/ok', 200],
      ['/boom', 500],
      ['/throws', 500],
      ['/missing', 404],
    ] as const) {
      expect((await get(app, path)).status).toBe(status);
      await until(async () => (await inFlight(app, 'k')) === 0, `slot of ${path} given back`);
    }
  });

  it('gives the slot back when the client disconnects mid-request, before the handler answers', async () => {
    const app = await start(createMemoryConcurrencyStore(), 1);
    const client = openRequest(app, '/hold');
    await until(() => gates.length === 1, 'request held');
    expect(await inFlight(app, 'k')).toBe(1);
    client.hangUp();
    expect(await client.ended).toBeInstanceOf(Error);
    await until(async () => (await inFlight(app, 'k')) === 0, 'slot given back');
    expect(gates).toHaveLength(1); // the handler has not answered
    expect((await get(app, '/ok')).status).toBe(200);
  });

  it('gives the slot back when a timeout destroys the connection', async () => {
    const app = await start(createMemoryConcurrencyStore(), 1);
    app.server.setTimeout(100); // no 'timeout' listener: Node destroys an idle socket
    expect(await openRequest(app, '/hold').ended).toBeInstanceOf(Error);
    await until(async () => (await inFlight(app, 'k')) === 0, 'slot given back');
    expect(gates).toHaveLength(1);
  });

  it('a request whose connection closed while its slot was being taken gives it back and goes no further', async () => {
    const memory = createMemoryConcurrencyStore();
    const asked: (() => void)[] = [];
    const slow: ConcurrencyStore = {
      name: 'slow',
      acquire: (request) => new Promise((resolve) => asked.push(() => resolve(memory.acquireSync(request)))),
      release: (key, lease) => memory.release(key, lease),
      close: () => memory.close(),
    };
    const app = await start(slow, 1);
    const client = openRequest(app, '/ok');
    await until(() => asked.length === 1, 'slot asked for');
    client.hangUp();
    await client.ended;
    await until(
      () => new Promise((resolve) => app.server.getConnections((_err, count) => resolve(count === 0))),
      'connection closed',
    );
    asked[0]!();
    await until(() => memory.size === 0, 'slot given back');
    expect(app.handled).toBe(0);
  });

  it('is exact across two replicas sharing Redis', async () => {
    const [a, b] = await Promise.all(
      redisClients.map((client) => start(createRedisConcurrencyStore({ client, prefix }), 3)),
    );
    const key = `shared-${Date.now()}`;
    const answers = Array.from({ length: 6 }, (_, i) => get(i % 2 ? a! : b!, '/hold', key));
    await until(() => gates.length === 3, 'three requests held');
    for (const gate of gates.splice(0)) gate();
    const statuses = (await Promise.all(answers)).map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
    await until(async () => (await inFlight(a!, key)) === 0, 'slots given back in Redis');
  });
});
