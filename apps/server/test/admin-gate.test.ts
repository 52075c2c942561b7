import http from 'node:http';
import { createMemoryStore } from '@animal-store/rate-limit';
import { beforeAll, describe, expect, it } from 'vitest';
import { adminRequest, ADMIN_TOKEN } from './admin-helpers.js';
import { expectError, useTestServer, type TestServer } from './helpers.js';

/** A request whose headers are sent as given: an array value goes out as several header lines. */
function rawRequest(url: string, headers: http.OutgoingHttpHeaders): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { headers }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** #24 items 8 and 12: who gets through the admin API's gate, and who a refusal there can lock out. */
describe('the admin API gate', () => {
  const ctx = useTestServer('sqlite', {
    adminToken: ADMIN_TOKEN,
    rateLimit: { store: createMemoryStore(), banThreshold: 1, banSeconds: 900 },
  });
  let server: TestServer;
  beforeAll(() => {
    server = ctx.server;
  });

  it('answers two Authorization headers 400, in either order, as /v1 does (item 8)', async () => {
    for (const pair of [
      [`Bearer ${ADMIN_TOKEN}`, 'Bearer wrong-token-wrong-token-wrong-token'],
      ['Bearer wrong-token-wrong-token-wrong-token', `Bearer ${ADMIN_TOKEN}`],
      [`Bearer ${ADMIN_TOKEN}`, `Bearer ${ADMIN_TOKEN}`],
    ]) {
      const res = await rawRequest(`${server.url}/admin/v1/keys`, { Authorization: pair });
      expect(res.status, pair.join(' | ')).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({ code: 'invalid_request', status: 400 });
    }
  });

  it('wrong tokens from an address never lock out a request with the right token from it (item 12)', async () => {
    // Operators behind one NAT share an address with whoever guesses there: the guesser is refused, then banned...
    const codes: string[] = [];
    for (let i = 0; i < 80 && codes.at(-1) !== 'api_key_banned'; i++) {
      const res = await fetch(`${server.url}/admin/v1/keys`, {
        headers: { Authorization: `Bearer guess-${i}-${'x'.repeat(32)}` },
      });
      codes.push(((await res.json()) as { code: string }).code);
    }
    expect(codes.at(-1)).toBe('api_key_banned');
    expect(codes).toContain('unauthorized');
    const banned = await fetch(`${server.url}/admin/v1/keys`);
    await expectError(banned, 429, 'api_key_banned');
    expect(Number(banned.headers.get('retry-after'))).toBeGreaterThan(0);
    // ...while the right token from the same address is served.
    const res = await adminRequest(server, 'GET', '/keys?limit=1');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('600');
  });
});
