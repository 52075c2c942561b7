import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoOf, serializedAs } from '../serialized.js';
import { installLeanJson, strongEtag } from './respond.js';

describe('installLeanJson', () => {
  // What the routes answer: a page made by the read path (its JSON given), a frozen array whose records can still
  // change, and a plain array.
  const cached = serializedAs({ json: '[{"id":1,"name":"a"}]' }, '[{"id":1,"name":"a"}]');
  const record = { id: 2, name: 'b' };
  const shallow = Object.freeze([record]);
  const plain = [{ id: 3, name: 'c' }];
  let origin = '';
  let close: () => void = () => undefined;
  beforeAll(async () => {
    const app = express();
    app.set('etag', 'strong');
    installLeanJson(app);
    app.get('/cached', (_req, res) => void res.json(cached));
    app.get('/shallow', (_req, res) => void res.json(shallow));
    app.get('/plain', (_req, res) => void res.json(plain));
    const server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
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
