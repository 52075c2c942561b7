import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiKey, CreatedApiKey } from '@animal-store/contract';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config/load.js';
import { SERVER_ROOT } from '../src/config/server-root.js';
import { adminRequest, ADMIN_TOKEN, keysTable } from './admin-helpers.js';
import { expectError, PROVIDERS, useTestServer, type TestServer } from './helpers.js';

/** #24 item 11: settings an operator can get wrong are refused with a message, not accepted without a word. */
describe('tokens that can never be sent are refused at start', () => {
  it.each([
    ['ADMIN_TOKEN', ' '.repeat(40)],
    ['ADMIN_TOKEN', `${'a'.repeat(20)} ${'b'.repeat(20)}`],
    ['ADMIN_TOKEN', `${'a'.repeat(40)}\u00e9`],
    ['ADMIN_TOKEN', `${'a'.repeat(40)}\t`],
    ['METRICS_TOKEN', ' '.repeat(20)],
  ])('%s of %j', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}.*(visible|printable)`));
  });

  it('the built server given an ADMIN_TOKEN of 40 spaces exits with code 2, naming the variable', () => {
    const dir = mkdtempSync(join(tmpdir(), 'animal-store-token-'));
    try {
      const run = spawnSync(process.execPath, [join(SERVER_ROOT, 'dist/main.js')], {
        env: {
          PATH: process.env.PATH ?? '',
          PORT: '0',
          DATABASE_URL: `file:${join(dir, 'db.sqlite')}`,
          ADMIN_TOKEN: ' '.repeat(40),
        },
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(/ADMIN_TOKEN.*(visible|printable)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a token of visible ASCII characters is taken as given', () => {
    const token = 'A-z0.9_~+/=' + 'x'.repeat(30);
    expect(loadConfig({ ADMIN_TOKEN: token }).adminToken).toBe(token);
  });
});

describe.each(PROVIDERS)('enterprise limits that contradict each other, on %s', (provider) => {
  const ctx = useTestServer(provider, { adminToken: ADMIN_TOKEN });
  let server: TestServer;
  beforeAll(() => {
    server = ctx.server;
  });

  it('refuses a per-minute limit above the per-day limit on create and on PATCH, naming both', async () => {
    const before = await keysTable(server);
    const res = await adminRequest(server, 'POST', '/keys', { plan: 'enterprise', perMinute: 500, perDay: 100 });
    const body = await expectError(res, 400, 'invalid_request', 'perMinute');
    expect(body.message).toContain('perDay');
    expect(await keysTable(server)).toBe(before);

    const created = await adminRequest(server, 'POST', '/keys', { plan: 'enterprise', perMinute: 50, perDay: 100 });
    const { key } = CreatedApiKey.parse(await created.json());
    const unchanged = await keysTable(server);
    await expectError(
      await adminRequest(server, 'PATCH', `/keys/${key.id}`, { perMinute: 101 }),
      400,
      'invalid_request',
      'perDay',
    );
    await expectError(
      await adminRequest(server, 'PATCH', `/keys/${key.id}`, { perDay: 49 }),
      400,
      'invalid_request',
      'perMinute',
    );
    expect(await keysTable(server)).toBe(unchanged);
    const equal = await adminRequest(server, 'PATCH', `/keys/${key.id}`, { perMinute: 100 });
    expect(ApiKey.parse(await equal.json())).toMatchObject({ perMinute: 100, perDay: 100 });
  });
});
