/**
 * `pnpm api:check` as CI runs it, on folders of its own: released documents, today's (edited), and a small workspace
 * whose .changeset folder (the repository's config: contract and client in one fixed group) says what is pending.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- the tests edit documents freely */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const contractDist = dirname(require.resolve('@animal-store/contract/openapi.json'));
const repoChangesetConfig = fileURLToPath(new URL('../../../.changeset/config.json', import.meta.url));
const cli = fileURLToPath(new URL('cli.ts', import.meta.url));
const run = promisify(execFile);

let dir: string;
const folder = (name: string) => join(dir, name);

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'api-check-'));
  for (const name of ['released', 'current']) {
    mkdirSync(folder(name));
    for (const file of ['openapi.json', 'admin-openapi.json'])
      copyFileSync(join(contractDist, file), join(folder(name), file));
  }
  const workspace = folder('workspace');
  for (const [file, text] of Object.entries({
    'package.json': '{ "name": "root", "private": true }',
    'pnpm-workspace.yaml': 'packages:\n  - packages/*\n',
    'packages/contract/package.json': '{ "name": "@animal-store/contract", "version": "1.4.0" }',
    'packages/client/package.json':
      '{ "name": "@animal-store/client", "version": "1.4.0", "dependencies": { "@animal-store/contract": "1.4.0" } }',
    '.changeset/config.json': readFileSync(repoChangesetConfig, 'utf8'),
  })) {
    mkdirSync(dirname(join(workspace, file)), { recursive: true });
    writeFileSync(join(workspace, file), text);
  }
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function editCurrent(edit: (document: Record<string, any>) => void) {
  const file = join(folder('current'), 'openapi.json');
  const document = JSON.parse(readFileSync(file, 'utf8')) as Record<string, any>;
  edit(document);
  writeFileSync(file, JSON.stringify(document));
}

function changeset(name: string, bumps: Record<string, string>) {
  const lines = Object.entries(bumps).map(([pkg, bump]) => `'${pkg}': ${bump}`);
  writeFileSync(join(folder('workspace'), '.changeset', `${name}.md`), `---\n${lines.join('\n')}\n---\n\nA change.\n`);
}

async function check(command = 'check') {
  const args = [
    require.resolve('tsx/cli'),
    cli,
    command,
    '--released',
    folder('released'),
    '--current',
    folder('current'),
  ];
  try {
    const { stdout, stderr } = await run(process.execPath, [...args, '--root', folder('workspace')], {
      timeout: 60_000,
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, output: stdout + stderr };
  }
}

const shorterName = (d: Record<string, any>) => (d.components.schemas.NewPet.properties.name.maxLength = 100);

it('passes when nothing changed', async () => {
  expect(await check()).toMatchObject({ code: 0, output: expect.stringContaining('no breaking change') });
});

it('fails on a breaking change, naming it, when no changeset bumps the major', async () => {
  editCurrent(shorterName);
  changeset('minor-one', { '@animal-store/contract': 'minor' });
  const result = await check();
  expect(result.code).toBe(1);
  expect(result.output).toContain('BREAKING request-max-length: /name: maxLength: old 255, new 100');
  expect(result.output).toContain("the contract's next release is minor");
});

it("passes a breaking change when a changeset bumps the major (the client's: the group is fixed)", async () => {
  editCurrent(shorterName);
  changeset('major-one', { '@animal-store/client': 'major' });
  expect(await check()).toMatchObject({ code: 0, output: expect.stringContaining('allowed') });
});

it('passes an additive change without any changeset', async () => {
  editCurrent((d) => (d.components.schemas.Pet.properties.color = { type: 'string' }));
  expect(await check()).toMatchObject({ code: 0, output: expect.stringContaining('additive response-property-added') });
});

it('snapshot makes today the released documents', async () => {
  editCurrent(shorterName);
  expect((await check('snapshot')).code).toBe(0);
  expect(await check()).toMatchObject({ code: 0, output: expect.stringContaining('openapi.json: unchanged') });
});
