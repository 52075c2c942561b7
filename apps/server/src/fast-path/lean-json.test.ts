import http from 'node:http';
import { initContract } from '@ts-rest/core';
import { createExpressEndpoints, initServer } from '@ts-rest/express';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installLeanJson, strongEtag } from './lean-json.js';
import { listenLocally } from '../../test/listen.js';
import { asBody, memoOf, serializedAs } from './serialized-body.js';

describe('installLeanJson', () => {
  // What the routes answer: a page made by the read path (its JSON given), a frozen array whose records can still
  // change, and a plain array.
  const cached = serializedAs({ json: '[{"id":1,"name":"a"}]' }, '[{"id":1,"name":"a"}]');
  const record = { id: 2, name: 'b' };
  const shallow = Object.freeze([record]);
  const plain = [{ id: 3, name: 'c' }];
  let origin = '';
  let close: () => Promise<void> = () => Promise.resolve();
  beforeAll(async () => {
    const app = express();
    app.set('etag', 'strong');
    installLeanJson(app);
    app.get('/cached', (_req, res) => void res.json(cached));
    app.get('/shallow', (_req, res) => void res.json(shallow));
    app.get('/plain', (_req, res) => void res.json(plain));
    ({ origin, close } = await listenLocally(http.createServer(app)));
  });
  afterAll(() => close());

  it('answers the JSON, its length and a strong ETag of the bytes, the same on every answer of a cached page', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${origin}/cached`);
      const body = await res.text();
      expect(body).toBe(cached.json);
      expect(res.headers.get('etag')).toBe(strongEtag(body));
      expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(body)));
      // Worked out once, kept with the page.
      expect(memoOf(cached)?.entity).toEqual({ body, etag: res.headers.get('etag'), length: Buffer.byteLength(body) });
    }
  });

  it('serializes again anything that can change between answers', async () => {
    expect(await (await fetch(`${origin}/shallow`)).text()).toBe('[{"id":2,"name":"b"}]');
    record.name = 'changed';
    const res = await fetch(`${origin}/shallow`);
    expect(await res.clone().text()).toBe('[{"id":2,"name":"changed"}]');
    expect(res.headers.get('etag')).toBe(strongEtag('[{"id":2,"name":"changed"}]'));
    expect(await (await fetch(`${origin}/plain`)).text()).toBe('[{"id":3,"name":"c"}]');
    plain.push({ id: 4, name: 'd' });
    expect(await (await fetch(`${origin}/plain`)).text()).toBe('[{"id":3,"name":"c"},{"id":4,"name":"d"}]');
  });
});

describe('installLeanJson (canary)', () => {
  it('answers what ts-rest routes return: ts-rest answers through res.json of the app', async () => {
    const c = initContract();
    const router = c.router({
      page: { method: 'GET', path: '/page', responses: { 200: c.type<{ id: number }[]>() } },
    });
    const app = express();
    installLeanJson(app);
    // A body whose given JSON differs from its own serialization: only our res.json sends the given one.
    const page = serializedAs<{ json: string }, { id: number }[]>({ json: '[{"id":7}]' }, '[{"id":7}]');
    createExpressEndpoints(
      router,
      initServer().router(router, { page: async () => ({ status: 200, body: asBody<{ id: number }[]>(page) }) }),
      app,
    );
    const { origin, close } = await listenLocally(http.createServer(app));
    try {
      const res = await fetch(`${origin}/page`);
      expect(await res.text()).toBe('[{"id":7}]');
      expect(res.headers.get('etag')).toBe(strongEtag('[{"id":7}]'));
    } finally {
      await close();
    }
  });
});
