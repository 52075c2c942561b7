import { existsSync, readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

const read = (file: string) => readFileSync(new URL(file, import.meta.url), 'utf8');
const { version } = JSON.parse(read('package.json')) as { version: string };
/** This version and every one CHANGELOG.md records (changesets writes a `## x.y.z` heading per release). */
const released = existsSync(new URL('CHANGELOG.md', import.meta.url))
  ? read('CHANGELOG.md')
      .split('\n')
      .flatMap((line) => /^## (\d+\.\d+\.\d+\S*)\s*$/.exec(line)?.slice(1, 2) ?? [])
  : [];

/** Build-time constants (src/releases.ts); the tests get the same through vitest.config.ts. */
export const define = { __ANIMAL_STORE_RELEASES__: JSON.stringify([...new Set([version, ...released])]) };

/**
 * ESM (dist/index.js) + CJS (dist/index.cjs) + types for both, so that a CommonJS app can `require()` the contract and
 * the client that depends on it. The OpenAPI documents are written next to them by src/scripts/write-openapi.ts.
 */
export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  target: 'node20',
  platform: 'node',
  tsconfig: 'tsconfig.build.json',
  dts: true,
  define,
  sourcemap: true,
  clean: true,
});
