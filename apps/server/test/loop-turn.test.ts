/**
 * A /v1 request whose work is synchronous (a cached key, the memory limiter, SQLite) is answered in the event-loop
 * turn that read it: nothing on its path hands it to a later phase of the loop, so the load shedder's turn budget
 * (src/overload/turn.ts) sees the work it admits, and a request does not wait for every other request of its turn.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { auth, useTestServer } from './helpers.js';

describe('the loop turn', () => {
  const ctx = useTestServer('sqlite', {}, { plan: 'free' });

  it('answers a /v1 list and get in the turn that read them, before its check phase', async () => {
    const pet = (await (
      await fetch(`${ctx.server.url}/v1/pets`, {
        method: 'POST',
        headers: auth(ctx.key, { 'Content-Type': 'application/json' }),
        body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
      })
    ).json()) as { id: number };
    // Whether each response had ended when the check phase of the turn that read its request came.
    const inTurn: Record<string, boolean> = {};
    const listener = (req: IncomingMessage, res: ServerResponse) => {
      const url = req.url!;
      setImmediate(() => (inTurn[url] = res.writableEnded));
    };
    ctx.server.http.prependListener('request', listener);
    try {
      for (const path of ['/v1/pets?limit=5', `/v1/pets/${pet.id}`, '/v1/pets?limit=1&status=available']) {
        const res = await fetch(`${ctx.server.url}${path}`, { headers: auth(ctx.key) });
        expect(res.status).toBe(200);
      }
    } finally {
      ctx.server.http.removeListener('request', listener);
    }
    expect(inTurn).toEqual({
      '/v1/pets?limit=5': true,
      [`/v1/pets/${pet.id}`]: true,
      '/v1/pets?limit=1&status=available': true,
    });
  });
});
