import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ApiKeyRecord } from '../db/types.js';
import { Admission } from './admission.js';
import { SOFT_CEILING, type Pressure } from './pressure.js';
import { HARD_LEVEL, type ShedPlan } from './priorities.js';
import { DRAIN, TurnBudget } from './turn.js';

/** The shed level the test sets (a monitor's view, without its timer). */
const monitor = {
  level: 0,
  utilization: 1,
  pressure: { ratio: 2, signal: 'event_loop_delay', queueing: 2 } as Pressure,
};
let server: Server | undefined;
afterEach(async () => {
  monitor.level = 0;
  monitor.utilization = 1;
  monitor.pressure = { ...monitor.pressure, signal: 'event_loop_delay' };
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** Keys the key cache "knows": `Bearer <plan>` is a cached key of that plan, `Bearer uncached-<plan>` needs a lookup. */
const planOf = (req: IncomingMessage): ShedPlan | undefined => {
  const { authorization } = req.headers;
  if (authorization === undefined) return 'none';
  const token = authorization.slice('Bearer '.length);
  return token.startsWith('uncached-') ? undefined : (token as ShedPlan);
};

async function start(timesInProcess = true) {
  const shed: string[] = [];
  const admission = new Admission({
    monitor,
    timesInProcess,
    onShed: (plan, signal) => shed.push(`${plan}/${signal}`),
  });
  admission.planOf = planOf;
  const app = express();
  // The key lookup, as resolveApiKey does it: the record of an uncached key.
  app.use((req, _res, next) => {
    const token = req.headers.authorization?.slice('Bearer uncached-'.length);
    req.apiKey = token ? ({ plan: token } as ApiKeyRecord) : null;
    next();
  });
  app.use(admission.afterKeyLookup);
  app.use((_req, res) => void res.json({ ok: true }));
  server = http.createServer((req, res) => void (admission.admit(req, res) && app(req, res)));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const send = (path: string, key?: string, method = 'GET') =>
    fetch(`${origin}${path}`, { method, headers: key ? { authorization: `Bearer ${key}` } : {} });
  return { admission, shed, send };
}

describe('Admission', () => {
  it('admits everything at level 0, counting requests in flight until their response closes', async () => {
    const { admission, send } = await start();
    const answers = await Promise.all([send('/v1/pets'), send('/v1/pets', 'free'), send('/docs')]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    await vi.waitFor(() => expect(admission.inFlight).toBe(0));
    // Their median time in the process, once: the controller reads it every sample.
    expect(admission.takeTimeInProcess()).toBeGreaterThan(0);
    expect(admission.takeTimeInProcess()).toBeUndefined();
  });

  it('keeps no times in the process when no signal reads them', async () => {
    const { admission, send } = await start(false);
    expect((await send('/v1/pets', 'free')).status).toBe(200);
    await vi.waitFor(() => expect(admission.inFlight).toBe(0));
    expect(admission.takeTimeInProcess()).toBeUndefined();
  });

  it('answers a shed request 503 with the Error body, Retry-After and no-store, telling its plan and signal', async () => {
    const { shed, send } = await start();
    monitor.level = 1;
    const answer = await send('/v1/pets');
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await answer.json()).toEqual({
      code: 'service_unavailable',
      message: 'The service is overloaded; retry after the Retry-After delay',
      status: 503,
    });
    expect(shed).toEqual(['none/event_loop_delay']);
  });

  it('never sheds the probes, the scrape or the admin API, even at the top', async () => {
    const { send } = await start();
    monitor.level = HARD_LEVEL + 1;
    const paths = ['/healthz', '/readyz?verbose=1', '/metrics', '/admin/v1/keys', '/admin/v1'];
    expect((await Promise.all(paths.map((p) => send(p)))).map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect((await send('/admin/v2')).status).toBe(503);
    expect((await send('/healthzz')).status).toBe(503);
  });

  it('sheds lower classes first: no key, then each plan, reads of a plan before its creates', async () => {
    const { send } = await start();
    const shareShed = async (key: string | undefined, method = 'GET') => {
      let shed = 0;
      for (let i = 0; i < 20; i++) if ((await send('/v1/pets', key, method)).status === 503) shed++;
      return shed / 20;
    };
    const table: Record<string, number[]> = {};
    for (const level of [0.5, 1.5, 2.25, 4.5]) {
      monitor.level = level;
      table[level] = [
        await shareShed(undefined),
        await shareShed('free'),
        await shareShed('free', 'POST'),
        await shareShed('pro'),
        await shareShed('business'),
        await shareShed('enterprise'),
        await shareShed('enterprise', 'POST'),
      ];
    }
    //                 none  free  free POST  pro   business  enterprise  enterprise POST
    expect(table).toEqual({
      0.5: [0.5, 0, 0, 0, 0, 0, 0],
      1.5: [1, 0.5, 0, 0, 0, 0, 0],
      2.25: [1, 1, 0.75, 0.25, 0, 0, 0],
      4.5: [1, 1, 1, 1, 1, 0.5, 0],
    });
  });

  it('counts the requests offered per half class: every one while shedding, one in eight while not', async () => {
    const { admission, send } = await start();
    for (let i = 0; i < 16; i++) await send('/v1/pets', 'free');
    expect(Array.from(admission.takeOffered()).slice(0, 5)).toEqual([0, 0, 2, 0, 0]);
    monitor.level = 0.5; // half the keyless requests shed, nothing else
    await send('/v1/pets');
    await send('/v1/pets', 'free', 'POST');
    await send('/v1/pets', 'pro');
    await send('/v1/pets', 'uncached-pro');
    await send('/healthz');
    // none, free read, free create, pro read (the uncached one counted after its lookup); never-shed paths not at all
    expect(Array.from(admission.takeOffered()).slice(0, 5)).toEqual([1, 0, 0, 1, 2]);
    expect(Array.from(admission.takeOffered()).every((n) => n === 0)).toBe(true);
  });

  it('decides a key the cache does not hold after its lookup, by the plan found', async () => {
    const { send, shed } = await start();
    monitor.level = 2; // free shed, pro not
    expect((await send('/v1/pets', 'uncached-free')).status).toBe(503);
    expect((await send('/v1/pets', 'uncached-pro')).status).toBe(200);
    expect(shed).toEqual(['free/event_loop_delay']);
  });

  it('at the hard level sheds everything that may be shed without looking at the key', async () => {
    const { admission, send, shed } = await start();
    const probe = vi.fn(planOf);
    admission.planOf = probe;
    monitor.level = HARD_LEVEL;
    expect((await send('/v1/pets', 'enterprise', 'POST')).status).toBe(503);
    expect(probe).not.toHaveBeenCalled();
    expect(shed).toEqual(['unknown/event_loop_delay']);
  });
});

describe('Admission: the turn budget', () => {
  /** Requests offered straight to the gate, on a turn whose clock and end the test sets. */
  function gate() {
    let now = 0;
    const ends: Array<() => void> = [];
    const turn = new TurnBudget(
      4,
      () => now,
      (f) => void ends.push(f),
    );
    const shed: string[] = [];
    const admission = new Admission({
      monitor,
      turn,
      turnFromUtilization: 0.8,
      onShed: (plan, signal) => shed.push(`${plan}/${signal}`),
    });
    admission.planOf = planOf;
    const offer = (url: string, key?: string, method = 'GET') => {
      const headers = key ? { authorization: `Bearer ${key}` } : {};
      let status = 0;
      const res = { writeHead: (s: number) => void (status = s), end: () => {}, once: () => {} };
      admission.admit({ url, method, headers } as IncomingMessage, res as unknown as ServerResponse);
      return status === 0 ? 'in' : status;
    };
    return { offer, shed, at: (ms: number) => void (now = ms), endTurn: () => ends.splice(0).forEach((f) => f()) };
  }

  it("sheds a turn's requests past their class's share of it, lowest first, never Enterprise or the probes", () => {
    const { offer, shed, at, endTurn } = gate();
    expect(offer('/v1/pets', 'free')).toBe('in'); // the turn's first
    at(5); // past the budget (4): keyless and Free shed
    expect([offer('/v1/pets'), offer('/v1/pets', 'free'), offer('/v1/pets', 'free', 'POST')]).toEqual([503, 503, 'in']);
    expect([offer('/v1/pets', 'pro'), offer('/v1/pets', 'uncached-free'), offer('/healthz')]).toEqual([
      'in',
      'in',
      'in',
    ]);
    at(13); // past Pro's (8) and Business's reads (12), not Business's creates (14)
    expect([offer('/v1/pets', 'pro'), offer('/v1/pets', 'business'), offer('/v1/pets', 'business', 'POST')]).toEqual([
      503,
      503,
      'in',
    ]);
    at(1000);
    expect([offer('/v1/pets', 'enterprise'), offer('/admin/v1/keys'), offer('/metrics')]).toEqual(['in', 'in', 'in']);
    endTurn();
    at(1001);
    expect([offer('/v1/pets', 'free'), offer('/v1/pets')]).toEqual(['in', 'in']); // a new turn
    expect(shed).toEqual([
      'none/event_loop_turn',
      'free/event_loop_turn',
      'pro/event_loop_turn',
      'business/event_loop_turn',
    ]);
  });

  it("at the soft ceiling held by the loop's delay, admits each turn's budget whatever the level", () => {
    const { offer, shed, at, endTurn } = gate();
    monitor.level = SOFT_CEILING; // every plan below Enterprise shed by the level
    expect([offer('/v1/pets', 'free'), offer('/v1/pets', 'pro', 'POST')]).toEqual(['in', 'in']);
    at(3); // within Free's share (4), past the keyless one's (2)
    expect([offer('/v1/pets', 'free'), offer('/v1/pets')]).toEqual(['in', 503]);
    // A key the cache does not hold goes to its lookup, whose gate keeps the level's rule.
    expect(offer('/v1/pets', 'uncached-free')).toBe('in');
    at(5);
    expect([offer('/v1/pets', 'free'), offer('/v1/pets', 'pro'), offer('/v1/pets', 'enterprise')]).toEqual([
      503,
      'in',
      'in',
    ]);
    endTurn();
    at(6);
    expect(offer('/v1/pets', 'free')).toBe('in'); // the next turn's budget
    // Held at the ceiling by another signal (the requests' wait, the database's), or above it: the level decides.
    monitor.pressure = { ...monitor.pressure, signal: 'request_wait' };
    expect(offer('/v1/pets', 'free')).toBe(503);
    monitor.pressure = { ...monitor.pressure, signal: 'event_loop_delay' };
    monitor.level = SOFT_CEILING + 0.5;
    expect(offer('/v1/pets', 'free')).toBe(503);
    expect(shed).toEqual([
      'none/event_loop_turn',
      'free/event_loop_turn',
      'free/request_wait',
      'free/event_loop_delay',
    ]);
  });

  it('leaves the budget alone while the loop was busy less than its utilization threshold', () => {
    const { offer, shed, at, endTurn } = gate();
    monitor.utilization = 0.7;
    expect(offer('/v1/pets', 'free')).toBe('in');
    at(100);
    expect([offer('/v1/pets'), offer('/v1/pets', 'free')]).toEqual(['in', 'in']);
    endTurn(); // a turn of 100 ms, timed though not judged
    monitor.utilization = 0.8; // busy enough: judged from now on
    at(200);
    expect(offer('/v1/pets', 'free')).toBe('in');
    at(200 + DRAIN * 100 - 1); // a backlog that shrinks: within DRAIN of the turn before
    expect(offer('/v1/pets', 'free')).toBe('in');
    at(200 + DRAIN * 100 + 1); // as long as the turn before: it grows, and is cut
    expect(offer('/v1/pets', 'free')).toBe(503);
    endTurn();
    const admitted = DRAIN * 100 + 1; // what the cut turn admitted
    at(1000);
    expect(offer('/v1/pets', 'free')).toBe('in');
    at(1000 + DRAIN * admitted - 1);
    expect(offer('/v1/pets', 'free')).toBe('in');
    at(1000 + DRAIN * admitted + 1); // cut: DRAIN of what the turn before admitted
    expect(offer('/v1/pets', 'free')).toBe(503);
    endTurn();
    at(2000);
    expect(offer('/v1/pets', 'free')).toBe('in');
    at(2000 + DRAIN ** 2 * (DRAIN * admitted + 1) + 1); // cut twice in a row: DRAIN squared
    expect(offer('/v1/pets', 'free')).toBe(503);
    expect(shed).toEqual(['free/event_loop_turn', 'free/event_loop_turn', 'free/event_loop_turn']);
  });
});
