/**
 * The release end to end: `pnpm release` publishes the workspace's contract and client to a private Verdaccio, then
 * fresh apps in a temporary folder outside the workspace install `@animal-store/client@<that version>` by name through
 * a scoped registry line and use it against the built server (temporary SQLite file, keys from its key CLI).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type BuiltServer, startBuiltServer } from '@animal-store/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppKind, makeFreshApp } from './fresh-apps.js';
import { type Registry, startRegistry } from './verdaccio.js';

const ROOT = realpathSync(fileURLToPath(new URL('../../../', import.meta.url))).replace(/\/?$/, '/');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'packages/client/package.json'), 'utf8')) as { version: string })
  .version;
const TYPESCRIPT = (
  JSON.parse(readFileSync(join(ROOT, 'node_modules/typescript/package.json'), 'utf8')) as {
    version: string;
  }
).version;
const ADMIN_TOKEN = 'registry-test-admin-token-0123456789abcdef';
const run = promisify(execFile);

let registry: Registry;
let server: BuiltServer;
let temp: string;

beforeAll(async () => {
  temp = realpathSync(mkdtempSync(join(tmpdir(), 'animal-store-release-')));
  expect(temp.startsWith(ROOT)).toBe(false);
  [registry, server] = await Promise.all([
    startRegistry(),
    startBuiltServer({ serverDir: join(ROOT, 'apps/server'), adminToken: ADMIN_TOKEN }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([registry?.stop(), server?.stop()]);
  if (temp) rmSync(temp, { recursive: true, force: true });
});

/** `pnpm release` in the workspace with a user npm configuration of the given lines (no git tags: a test). */
async function release(npmrc: string) {
  const userconfig = join(temp, `release-${Date.now()}.npmrc`);
  writeFileSync(userconfig, npmrc);
  return run('pnpm', ['release', '--no-git-tag'], {
    cwd: ROOT,
    env: { ...process.env, npm_config_userconfig: userconfig },
    timeout: 240_000,
  });
}

describe('pnpm release', () => {
  it('refuses when the npm configuration names no registry for @animal-store', async () => {
    await expect(release('')).rejects.toMatchObject({
      stderr: expect.stringContaining('no registry for @animal-store'),
    });
  });

  it('publishes contract and client at the workspace version, every range a version', async () => {
    expect(await registry.packument('@animal-store/client')).toBeUndefined();
    await release(registry.npmrc({ auth: true }));
    for (const name of ['@animal-store/contract', '@animal-store/client']) {
      const packument = await registry.packument(name);
      expect(packument?.['dist-tags'].latest, name).toBe(VERSION);
      const published = packument?.versions[VERSION];
      expect(published?.engines?.node).toBeTruthy();
      for (const range of Object.values(published?.dependencies ?? {}))
        expect(range).not.toMatch(/^(workspace|catalog):/);
    }
    const client = await registry.packument('@animal-store/client');
    expect(client?.versions[VERSION]?.dependencies?.['@animal-store/contract']).toBe(VERSION);
  }, 300_000);

  it('publishes nothing the second time: the versions are there', async () => {
    const { stdout, stderr } = await release(registry.npmrc({ auth: true }));
    expect(`${stdout}${stderr}`).toMatch(/is already published|No unpublished projects/i);
  }, 120_000);
});

describe.each<[AppKind, string[]]>([
  ['npm-esm', []],
  ['npm-cjs', []],
  ['pnpm-ts', [`typescript@${TYPESCRIPT}`, '@types/node@^20.19.0']],
])('a fresh %s app', (kind, tools) => {
  it(`installs @animal-store/client@${VERSION} from the registry and uses it against the server`, async () => {
    const app = await makeFreshApp({
      kind,
      root: temp,
      npmrc: registry.npmrc(),
      packages: [`@animal-store/client@${VERSION}`, ...tools],
      workspaceRoot: ROOT,
    });
    const seen = (await app.start({
      APP: kind,
      BASE_URL: server.baseUrl,
      ORIGIN: server.origin,
      API_KEY: await server.createKey(),
      ADMIN_TOKEN,
    })) as { resolved: string };
    expect(realpathSync(seen.resolved).startsWith(realpathSync(app.dir))).toBe(true);
    expect(seen).toEqual({
      version: VERSION,
      created: [201, 201],
      sameId: true,
      replayed: 'true',
      page: { status: 200, size: 2, next: true },
      mine: 5,
      unauthorized: { type: true, status: 401, code: 'unauthorized' },
      admin: { status: 201, plan: 'pro', read: 200 },
      resolved: seen.resolved,
    });
  }, 300_000);
});
