import express from 'express';
import { describe, expect, it } from 'vitest';
import { listenLocally } from '../../test/listen.js';
import { createAppServer } from './app-prototypes.js';

describe('createAppServer (canary)', () => {
  it("creates requests and responses with the app's prototypes, the very ones Express sets", async () => {
    const app = express();
    const created: Array<[object | null, object | null]> = [];
    const handled: Array<[object | null, object | null]> = [];
    app.get('/echo', (req, res) => {
      handled.push([Object.getPrototypeOf(req), Object.getPrototypeOf(res)]);
      res.status(201).json({ query: req.query, path: req.path, host: req.hostname });
    });
    const server = createAppServer(app);
    // Before Express's own listener: the objects as node:http created them.
    server.prependListener('request', (req, res) =>
      created.push([Object.getPrototypeOf(req), Object.getPrototypeOf(res)]),
    );
    const { origin, close } = await listenLocally(server);
    try {
      const res = await fetch(`${origin}/echo?a=1`);
      expect(res.status).toBe(201);
      expect(await res.json()).toEqual({ query: { a: '1' }, path: '/echo', host: '127.0.0.1' });
      // node:http honoured the classes given...
      expect(created).toEqual([[app.request, app.response]]);
      // ...and Express set the same prototypes again, so it had nothing to change.
      expect(handled).toEqual([[app.request, app.response]]);
    } finally {
      await close();
    }
  });
});
