import { defineConfig } from 'tsup';

/**
 * ESM (dist/index.js, dist/admin.js) + CJS (dist/index.cjs, dist/admin.cjs) + types for both: the API client and,
 * as its own export (`@animal-store/client/admin`), the admin API's client. The contract is bundled in, types included: it is an
 * ESM-only workspace package, so leaving it external would break `require()` and would make consumers build it.
 * zod and @ts-rest/core stay dependencies (both ship ESM and CJS).
 */
export default defineConfig({
  entry: ['src/index.ts', 'src/admin.ts'],
  format: ['esm', 'cjs'],
  target: 'node20',
  platform: 'node',
  tsconfig: 'tsconfig.build.json',
  dts: { resolve: true },
  noExternal: ['@animal-store/contract'],
  sourcemap: true,
  clean: true,
  treeshake: true,
});
