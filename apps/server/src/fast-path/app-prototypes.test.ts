import v8 from 'node:v8';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { listenLocally } from '../../test/listen.js';
import { createAppServer } from './app-prototypes.js';

// V8's own test of an object's layout: fields in the object (fast mode), or a dictionary. Natives syntax is allowed for
// functions compiled after the flag is set, in this test worker only.
v8.setFlagsFromString('--allow-natives-syntax');
// eslint-disable-next-line @typescript-eslint/no-implied-eval -- natives syntax compiles only at run time, after the flag
const hasFastProperties = new Function('o', 'return %HasFastProperties(o)') as (o: object) => boolean;

describe('createAppServer (canary)', () => {
  it("creates requests and responses with the app's prototypes, the very ones Express sets", async () => {
    const app = express();
    const created: Array<[object | null, object | null]> = [];
    const fast: boolean[] = [];
    const handled: Array<[object | null, object | null]> = [];
    app.get('/echo', (req, res) => {
      handled.push([Object.getPrototypeOf(req), Object.getPrototypeOf(res)]);
      res.status(201).json({ query: req.query, path: req.path, host: req.hostname });
    });
    const server = createAppServer(app);
    // Before Express's own listener: the objects as node:http created them.
    server.prependListener('request', (req, res) => {
      created.push([Object.getPrototypeOf(req), Object.getPrototypeOf(res)]);
      fast.push(hasFastProperties(req), hasFastProperties(res));
    });
    const { origin, close } = await listenLocally(server);
    try {
      const res = await fetch(`${origin}/echo?a=1`);
      expect(res.status).toBe(201);
      expect(await res.json()).toEqual({ query: { a: '1' }, path: '/echo', host: '127.0.0.1' });
      // node:http honoured the classes given...
      expect(created).toEqual([[app.request, app.response]]);
      // ...and Express set the same prototypes again, so it had nothing to change.
      expect(handled).toEqual([[app.request, app.response]]);
      // ...and both are laid out as node's own objects, not dictionaries.
      expect(fast).toEqual([true, true]);
    } finally {
      await close();
    }
  });
});
