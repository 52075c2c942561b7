import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { listenLocally } from '../../test/listen.js';
import { responseInFlight } from './response-in-flight.js';

describe('responseInFlight (canary)', () => {
  it("is the response being written on the request's connection, and none once it is done", async () => {
    const seen: unknown[] = [];
    const server = http.createServer((req, res) => {
      seen.push(responseInFlight(req.socket) === res);
      res.writeHead(200).end('ok', () => setImmediate(() => seen.push(responseInFlight(req.socket))));
    });
    const { origin, close } = await listenLocally(server);
    try {
      expect(await (await fetch(`${origin}/`)).text()).toBe('ok');
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(seen).toEqual([true, null]);
    } finally {
      await close();
    }
  });
});
