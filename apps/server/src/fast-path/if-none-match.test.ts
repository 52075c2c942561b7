import http from 'node:http';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { listenLocally } from '../../test/listen.js';
import { installIfNoneMatch, noneMatch } from './if-none-match.js';
import { installLeanJson } from './lean-json.js';

describe('noneMatch', () => {
  it('compares entity tags weakly, a list of them, and * as any', () => {
    expect(noneMatch('"a"', '"a"')).toBe(true);
    expect(noneMatch('W/"a"', '"a"')).toBe(true);
    expect(noneMatch('"b", "a"', '"a"')).toBe(true);
    expect(noneMatch('*', '"a"')).toBe(true);
    expect(noneMatch('"b"', '"a"')).toBe(false);
    expect(noneMatch(undefined, '"a"')).toBe(false);
    expect(noneMatch('"a"', undefined)).toBe(false);
  });
});

describe('installIfNoneMatch (canary)', () => {
  it("answers 304 despite Cache-Control: no-cache, through Express's send and the lean JSON answer alike", async () => {
    const app = express();
    app.set('etag', 'strong');
    installIfNoneMatch(app);
    installLeanJson(app);
    app.get('/text', (_req, res) => void res.type('text/plain').send('hello'));
    app.get('/json', (_req, res) => void res.json({ hello: 'world' }));
    const { origin, close } = await listenLocally(http.createServer(app));
    try {
      for (const path of ['/text', '/json']) {
        const first = await fetch(`${origin}${path}`);
        const etag = first.headers.get('etag')!;
        expect(etag, path).toMatch(/^"/);
        const again = await fetch(`${origin}${path}`, {
          headers: { 'If-None-Match': etag, 'Cache-Control': 'no-cache' },
        });
        expect(again.status, path).toBe(304);
        expect(await again.text(), path).toBe('');
        const changed = await fetch(`${origin}${path}`, { headers: { 'If-None-Match': '"other"' } });
        expect(changed.status, path).toBe(200);
      }
    } finally {
      await close();
    }
  });
});
