import { existsSync } from 'node:fs';
import { defineConfig } from 'tsup';
import { libraryConfig, packageVersion, readPackageFile } from '../../tsup.library';

const version = packageVersion(import.meta.url);
/** This version and every one CHANGELOG.md records (changesets writes a `## x.y.z` heading per release). */
const released = existsSync(new URL('CHANGELOG.md', import.meta.url))
  ? readPackageFile(import.meta.url, 'CHANGELOG.md')
      .split('\n')
      .flatMap((line) => /^## (\d+\.\d+\.\d+\S*)\s*$/.exec(line)?.slice(1, 2) ?? [])
  : [];

/** Build-time constants (src/releases.ts); the tests get the same through vitest.config.ts. */
export const define = { __ANIMAL_STORE_RELEASES__: JSON.stringify([...new Set([version, ...released])]) };

/**
 * ESM (dist/index.js) + CJS (dist/index.cjs) + types for both, so that a CommonJS app can `require()` the contract and
 * the client that depends on it. The OpenAPI documents are written next to them by src/scripts/write-openapi.ts.
 */
export default defineConfig(libraryConfig({ entry: ['src/index.ts'], define }));
