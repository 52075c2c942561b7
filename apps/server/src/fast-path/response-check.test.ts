import http from 'node:http';
import { initContract } from '@ts-rest/core';
import { createExpressEndpoints, initServer } from '@ts-rest/express';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { listenLocally } from '../../test/listen.js';
import { installLeanJson } from './lean-json.js';
import { asBody, serializedAs } from './serialized-body.js';
import { installResponseCheck } from './response-check.js';

describe('installResponseCheck', () => {
  const Thing = z.object({ name: z.string(), id: z.number() });
  const contract = initContract().router({
    good: { method: 'GET', path: '/good', responses: { 200: Thing } },
    page: { method: 'GET', path: '/page', responses: { 200: z.array(Thing) } },
    bad: { method: 'GET', path: '/bad', responses: { 200: Thing } },
  });
  const page = serializedAs<{ json: string }, Array<z.infer<typeof Thing>>>(
    { json: '[{"id":2,"name":"b"}]' },
    '[{"id":2,"name":"b"}]',
  );
  let origin = '';
  let close: () => Promise<void> = () => Promise.resolve();
  beforeAll(async () => {
    const app = express();
    installLeanJson(app);
    installResponseCheck(app);
    const s = initServer();
    const router = s.router(contract, {
      // Keys in another order than the schema's, and one the schema does not know: sent as they are.
      good: async () => ({ status: 200, body: { id: 1, name: 'a', extra: true } }),
      page: async () => ({ status: 200, body: asBody(page) }),
      bad: async () => ({ status: 200, body: { id: 'one' } as unknown as z.infer<typeof Thing> }),
    });
    createExpressEndpoints(contract, router, app, { logInitialization: false });
    app.use(((_err, _req, res, _next) => {
      res.status(500).end('checked');
    }) as express.ErrorRequestHandler);
    ({ origin, close } = await listenLocally(http.createServer(app)));
  });
  afterAll(() => close());

  it('sends the bytes the route answered, not a copy rebuilt by the schema', async () => {
    expect(await (await fetch(`${origin}/good`)).text()).toBe('{"id":1,"name":"a","extra":true}');
    expect(await (await fetch(`${origin}/page`)).text()).toBe(page.json);
  });

  it('refuses an answer that breaks the contract before anything of it is sent', async () => {
    const res = await fetch(`${origin}/bad`);
    expect(res.status).toBe(500);
    expect(await res.text()).toBe('checked');
  });
});
