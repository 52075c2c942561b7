// The build every published package shares (tsup): ESM + CJS + types for both, for Node 20, from its
// tsconfig.build.json, with build-time constants; each package's tsup.config.ts adds its entries and constants.
// No import of tsup here: the root has none; the packages' defineConfig checks the options.
import { readFileSync } from 'node:fs';

/** A file next to a package's tsup.config.ts (`import.meta.url`), as text. */
export const readPackageFile = (configUrl: string, file: string): string =>
  readFileSync(new URL(file, configUrl), 'utf8');

/** The package's version, from its package.json: the one place a release changes it. */
export const packageVersion = (configUrl: string): string =>
  (JSON.parse(readPackageFile(configUrl, 'package.json')) as { version: string }).version;

/** A library's tsup options: the shared ones, then the package's own (`entry`, `define`, ...). */
export const libraryConfig = <Own extends object>(options: Own) => ({
  format: ['esm' as const, 'cjs' as const],
  target: 'node20',
  platform: 'node' as const,
  tsconfig: 'tsconfig.build.json',
  dts: true,
  sourcemap: true,
  clean: true,
  ...options,
});
