import { ADMIN_PREFIX, adminContract, CreatedApiKey } from '@animal-store/contract';
import { beforeAll, describe, expect, it } from 'vitest';
import { adminRequest, ADMIN_TOKEN, keysTable } from './admin-helpers.js';
import { expectError, PROVIDERS, useTestServer, type TestServer } from './helpers.js';

/** #24 items 1-3: dates, names and cursors the admin API took and the database refused (500), on both databases. */
describe.each(PROVIDERS)('admin API input the database cannot take, on %s', (provider) => {
  const ctx = useTestServer(provider, { adminToken: ADMIN_TOKEN });
  let server: TestServer;
  let keyId: number;
  beforeAll(async () => {
    server = ctx.server;
    const res = await adminRequest(server, 'POST', '/keys', { plan: 'pro', name: 'target' });
    keyId = CreatedApiKey.parse(await res.json()).key.id;
  });

  /** A refused request changes no key: the whole table is compared. */
  async function refused(method: string, path: string, body: unknown, status: number, messagePart: string) {
    const before = await keysTable(server);
    await expectError(await adminRequest(server, method, path, body), status, 'invalid_request', messagePart);
    expect(await keysTable(server)).toBe(before);
  }

  describe('expiresAt with an impossible or non-RFC 3339 offset (item 1)', () => {
    it.each([
      '2030-01-01T00:00:00+24:00',
      '2030-01-01T00:00:00+12:60',
      '2030-01-01T00:00:00-25:00',
      '2030-01-01T00:00:00+2400',
      '2030-01-01T00:00:00-0800',
      '2030-01-01T23:59:60Z',
      '2030-02-30T00:00:00Z',
      '9999-12-31T23:59:59-01:00',
    ])('%s is a 400 naming expiresAt on create and on PATCH', async (expiresAt) => {
      await refused('POST', '/keys', { plan: 'pro', expiresAt }, 400, 'expiresAt');
      await refused('PATCH', `/keys/${keyId}`, { expiresAt }, 400, 'expiresAt');
    });

    it.each([
      ['2030-01-01T05:30:00+05:30', '2030-01-01T00:00:00.000Z'],
      ['2030-01-01t00:00:00z', '2030-01-01T00:00:00.000Z'],
      ['2029-12-31T16:00:00-08:00', '2030-01-01T00:00:00.000Z'],
      ['2030-01-01T00:00:00.123456789+23:59', '2029-12-31T00:01:00.123Z'],
    ])('%s is accepted as %s', async (expiresAt, stored) => {
      const res = await adminRequest(server, 'POST', '/keys', { plan: 'pro', expiresAt });
      expect(res.status).toBe(201);
      expect(CreatedApiKey.parse(await res.json()).key.expiresAt).toBe(stored);
    });
  });

  describe('key names under the pet-name rule (item 2)', () => {
    it.each([
      ['NUL', 'a\u0000b'],
      ['ESC', 'red\u001b[31m'],
      ['a newline', 'two\nlines'],
      ['DEL', 'del\u007f'],
      ['a C1 control', 'c1\u0085'],
      ['a lone surrogate', 'x\ud800y'],
      ['whitespace only', ' \t '],
      ['201 characters', 'x'.repeat(201)],
    ])('%s is a 400 naming the field on create and on PATCH', async (_what, name) => {
      await refused('POST', '/keys', { plan: 'pro', name }, 400, 'name');
      await refused('PATCH', `/keys/${keyId}`, { name }, 400, 'name');
    });

    it('counts code points: 200 emoji are a name, and come back as sent', async () => {
      const name = '\u{1F415}'.repeat(200);
      const res = await adminRequest(server, 'POST', '/keys', { plan: 'pro', name });
      expect(res.status).toBe(201);
      expect(CreatedApiKey.parse(await res.json()).key.name).toBe(name);
    });
  });

  describe('a list cursor beyond the id range (item 3)', () => {
    it.each(['p1.2147483648', 'p1.9007199254740991', 'p1.0', 'p1.01', 'p1.-1', 'p2.1'])(
      'a cursor of %s is a 400 naming the cursor',
      async (plain) => {
        const cursor = Buffer.from(plain, 'utf8').toString('base64url');
        await expectError(
          await adminRequest(server, 'GET', `/keys?cursor=${cursor}`),
          400,
          'invalid_request',
          'cursor',
        );
      },
    );

    it('the last id of the range is a cursor (an empty page)', async () => {
      const cursor = Buffer.from('p1.2147483647', 'utf8').toString('base64url');
      const res = await adminRequest(server, 'GET', `/keys?cursor=${cursor}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual([]);
    });

    it('a key id beyond the range is a 400 on every route that takes one', async () => {
      // Every route of the admin contract with an `:id`, so that a new one is held to this too.
      for (const route of Object.values(adminContract).filter((r) => r.path.includes('/:id'))) {
        const { method } = route;
        const path = route.path.slice(ADMIN_PREFIX.length).replace(':id', '2147483648');
        await expectError(
          await adminRequest(server, method, path, method === 'PATCH' ? { name: 'x' } : undefined),
          400,
          'invalid_request',
          'id',
        );
      }
    });
  });
});
