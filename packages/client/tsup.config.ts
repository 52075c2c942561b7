import { defineConfig } from 'tsup';
import { libraryConfig, packageVersion } from '../../tsup.library';

/** Build-time constants (src/version.ts); the tests get the same through vitest.config.ts. */
export const define = { __ANIMAL_STORE_CLIENT_VERSION__: JSON.stringify(packageVersion(import.meta.url)) };

/**
 * ESM (dist/index.js, dist/admin.js) + CJS (dist/index.cjs, dist/admin.cjs) + types for both: the API client and,
 * as its own export (`@animal-store/client/admin`), the admin API's client. `@animal-store/contract` (ESM and CJS too),
 * zod and @ts-rest/core stay dependencies. The version comes from package.json, the one place a release changes it.
 */
export default defineConfig(libraryConfig({ entry: ['src/index.ts', 'src/admin.ts'], define, treeshake: true }));
