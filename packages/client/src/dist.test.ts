/**
 * The built package, as an internal app without our build tooling sees it: plain `node` child processes that
 * `require()` the CJS build and `import()` the ESM build through the package's `exports` map.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Peer, RATE_HEADERS, startPeer } from './test-support/peer.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);

/** Lists pets with the loaded module and prints what a caller sees. */
const script = (load: string, resolve: string) => `
  ${load}
  const resolved = ${resolve};
  const client = mod.createAnimalStoreClient({ baseUrl: process.env.PEER_URL, apiKey: 'k' });
  client.listPets({ query: { limit: 2 } }).then((result) => {
    console.log(JSON.stringify({
      resolved: resolved.replace(/^file:\\/\\//, ''),
      type: typeof mod.createAnimalStoreClient,
      paths: Object.values(mod.contract).map((route) => route.path),
      status: result.status,
      body: result.body,
      rateLimit: client.rateLimit,
      parsed: mod.NewPet.safeParse({ name: 'Big', categoryId: 9007199254740991 }).success,
    }));
  });
`;

let peer: Peer;
beforeAll(async () => {
  peer = await startPeer([
    { status: 200, body: [{ id: 3000000000, name: 'Big', categoryId: 9007199254740991 }], headers: RATE_HEADERS },
  ]);
});
afterAll(() => peer.close());

describe.each([
  [
    'require() of dist/index.cjs',
    'dist/index.cjs',
    ['-e', script(`const mod = require('@animal-store/client');`, `require.resolve('@animal-store/client')`)],
  ],
  [
    'import() of dist/index.js',
    'dist/index.js',
    [
      '--input-type=module',
      '-e',
      script(`const mod = await import('@animal-store/client');`, `import.meta.resolve('@animal-store/client')`),
    ],
  ],
])('%s', (_name, file, args) => {
  it('loads and works in plain node', async () => {
    expect(existsSync(`${packageDir}${file}`), `${file}: run the build first`).toBe(true);
    const { stdout } = await run(process.execPath, args, {
      cwd: packageDir,
      env: { ...process.env, PEER_URL: peer.baseUrl },
      timeout: 20_000,
    });
    expect(JSON.parse(stdout)).toEqual({
      resolved: `${packageDir}${file}`,
      type: 'function',
      paths: ['/v1/pets', '/v1/pets', '/v1/pets/:petId', '/v1/rate_limit'],
      status: 200,
      body: [{ id: 3000000000, name: 'Big', categoryId: 9007199254740991 }],
      rateLimit: { limit: 60, remaining: 59, reset: 1900000000 },
      parsed: true,
    });
  });
});

describe.each([
  [
    'require()',
    ['-e', `const mod = require('@animal-store/client/admin'); console.log(JSON.stringify(Object.keys(mod)))`],
  ],
  [
    'import()',
    [
      '--input-type=module',
      '-e',
      `const mod = await import('@animal-store/client/admin'); console.log(JSON.stringify(Object.keys(mod)))`,
    ],
  ],
])('%s of @animal-store/client/admin', (_name, args) => {
  it('exports the admin client on its own', async () => {
    const { stdout } = await run(process.execPath, args, { cwd: packageDir, timeout: 20_000 });
    expect(JSON.parse(stdout)).toEqual(['createAnimalStoreAdminClient']);
  }, 30_000);
});

it('ships declarations for both module systems, taking the contract types from @animal-store/contract', async () => {
  const { readFile } = await import('node:fs/promises');
  for (const file of ['dist/index.d.ts', 'dist/index.d.cts']) {
    const text = await readFile(`${packageDir}${file}`, 'utf8');
    expect(text).toContain('declare function createAnimalStoreClient');
    expect(text).toContain("from '@animal-store/contract'");
  }
});

it('knows its version without reading package.json at run time', async () => {
  const { version } = JSON.parse(
    await (await import('node:fs/promises')).readFile(`${packageDir}package.json`, 'utf8'),
  ) as {
    version: string;
  };
  for (const args of [
    ['-e', `console.log(require('@animal-store/client').VERSION)`],
    ['--input-type=module', '-e', `console.log((await import('@animal-store/client')).VERSION)`],
  ]) {
    const { stdout } = await run(process.execPath, args, { cwd: packageDir, timeout: 20_000 });
    expect(stdout.trim()).toBe(version);
  }
  const { readFile } = await import('node:fs/promises');
  expect(await readFile(`${packageDir}dist/index.cjs`, 'utf8')).not.toContain('package.json');
});
