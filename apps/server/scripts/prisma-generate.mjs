#!/usr/bin/env node
// Writes prisma/<provider>/schema.prisma from prisma/models.prisma and runs `prisma generate` for each provider.
// `--check` only verifies that the committed schemas match the model source (CI fails on drift).
//
// The Prisma CLI wants a schema engine binary even for `generate`, which does not use it; where Prisma's download
// host is unreachable, PRISMA_SCHEMA_ENGINE_BINARY may point at any executable. We default it to this Node binary.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const models = readFileSync(join(root, 'prisma/models.prisma'), 'utf8');
const providers = ['sqlite', 'postgresql'];

function schemaFor(provider) {
  return `// GENERATED from prisma/models.prisma by scripts/prisma-generate.mjs. Do not edit.
generator client {
  provider     = "prisma-client"
  output       = "../../src/generated/${provider}"
  moduleFormat = "esm"
  runtime      = "nodejs"
  importFileExtension = "js"
}

datasource db {
  provider = "${provider}"
}

${models}`;
}

// Turbo runs build, lint and typecheck side by side, and each starts with this script. `prisma generate` empties its
// output folder before writing it, so a second generate would delete files under a running `tsc`. One writer at a
// time, then: the lock is a directory (mkdir is atomic); the others wait for it and then find the stamp current. A lock
// left by a killed run is taken over once it is older than any generate takes.
function takeLock() {
  const lock = join(root, 'src/generated/.generate-lock');
  const staleMs = 120_000;
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  mkdirSync(dirname(lock), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      let age;
      try {
        age = Date.now() - statSync(lock).mtimeMs;
      } catch {
        continue; // released between our mkdir and stat
      }
      if (age > staleMs) rmSync(lock, { recursive: true, force: true });
      else Atomics.wait(sleeper, 0, 0, 100);
    }
  }
  process.on('exit', () => rmSync(lock, { recursive: true, force: true }));
}

const check = process.argv.includes('--check');
if (!check) takeLock();
let drift = false;
for (const provider of providers) {
  const file = join(root, 'prisma', provider, 'schema.prisma');
  const wanted = schemaFor(provider);
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '';
  if (current !== wanted) {
    if (check) {
      console.error(
        `prisma/${provider}/schema.prisma does not match prisma/models.prisma: run pnpm --filter @animal-store/server generate`,
      );
      drift = true;
      continue;
    }
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, wanted);
  }
}
if (check) process.exit(drift ? 1 : 0);

const require = createRequire(import.meta.url);
const cli = join(dirname(require.resolve('prisma/package.json')), 'build/index.js');
const env = {
  ...process.env,
  PRISMA_HIDE_UPDATE_MESSAGE: '1',
  PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? process.execPath,
};
for (const provider of providers) {
  const stamp = join(root, 'src/generated', provider, '.schema-stamp');
  const schema = readFileSync(join(root, 'prisma', provider, 'schema.prisma'), 'utf8');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === schema) continue; // already generated from this schema
  execFileSync(process.execPath, [cli, 'generate', '--no-hints', `--schema=prisma/${provider}/schema.prisma`], {
    cwd: root,
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  writeFileSync(stamp, schema);
}
