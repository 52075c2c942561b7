import type { AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { createServer } from './server.js';

describe('createServer', () => {
  it("creates requests and responses with the app's prototypes, so Express has nothing to change", async () => {
    const app = express();
    app.get('/echo', (req, res) => {
      res.status(201).json({ query: req.query, path: req.path, host: req.hostname });
    });
    const server = createServer(app);
    const seen: Array<[object | null, object | null]> = [];
    // Before Express's own listener: the objects as node:http created them.
    server.prependListener('request', (req, res) =>
      seen.push([Object.getPrototypeOf(req), Object.getPrototypeOf(res)]),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/echo?a=1`);
      expect(res.status).toBe(201);
      expect(await res.json()).toEqual({ query: { a: '1' }, path: '/echo', host: '127.0.0.1' });
      expect(seen).toEqual([[app.request, app.response]]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
