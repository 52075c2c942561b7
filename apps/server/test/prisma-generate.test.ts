import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const server = fileURLToPath(new URL('..', import.meta.url));

/** A copy of the server's generation inputs (the script, the models, its node_modules linked) in a folder of its own. */
function scratchRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'animal-store-generate-'));
  mkdirSync(join(root, 'scripts'));
  mkdirSync(join(root, 'prisma'));
  cpSync(join(server, 'scripts/prisma-generate.mjs'), join(root, 'scripts/prisma-generate.mjs'));
  cpSync(join(server, 'prisma/models.prisma'), join(root, 'prisma/models.prisma'));
  cpSync(join(server, 'package.json'), join(root, 'package.json'));
  symlinkSync(join(server, 'node_modules'), join(root, 'node_modules'), 'dir');
  return root;
}

describe('scripts/prisma-generate.mjs', () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  });

  // turbo runs build, lint and typecheck at once, each starting with this script: a second `prisma generate` would
  // empty the output folder under the first's `tsc` (a clean clone's CI failed so).
  it('generates each client once when three runs start together on a clean folder', async () => {
    const root = scratchRoot();
    roots.push(root);
    const script = join(root, 'scripts/prisma-generate.mjs');
    const runs = await Promise.all([1, 2, 3].map(() => run(process.execPath, [script], { cwd: root })));
    const generated = runs.map(({ stdout, stderr }) => `${stdout}${stderr}`.match(/Generated Prisma Client/g) ?? []);
    expect(generated.flat()).toHaveLength(2); // sqlite and postgresql, by one run; the others found them current
    for (const provider of ['sqlite', 'postgresql']) {
      expect(existsSync(join(root, 'src/generated', provider, 'client.ts'))).toBe(true);
      expect(readFileSync(join(root, 'src/generated', provider, '.schema-stamp'), 'utf8')).toBe(
        readFileSync(join(root, 'prisma', provider, 'schema.prisma'), 'utf8'),
      );
    }
    expect(existsSync(join(root, 'src/generated/.generate-lock'))).toBe(false);
  }, 60_000);

  it('takes over a lock left by a run that was killed, once it is stale', async () => {
    const root = scratchRoot();
    roots.push(root);
    const lock = join(root, 'src/generated/.generate-lock');
    mkdirSync(lock, { recursive: true });
    const old = new Date(Date.now() - 10 * 60_000);
    utimesSync(lock, old, old);
    await run(process.execPath, [join(root, 'scripts/prisma-generate.mjs')], { cwd: root });
    expect(existsSync(join(root, 'src/generated/sqlite/client.ts'))).toBe(true);
    expect(existsSync(lock)).toBe(false);
  }, 60_000);
});
