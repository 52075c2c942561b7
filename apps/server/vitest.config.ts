import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // The fault suite stops and fills things of its own: `pnpm test:faults` (vitest.faults.config.ts).
    exclude: [...configDefaults.exclude, 'test/faults/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Test files share the machine's PostgreSQL and Redis; each uses its own database or key prefix.
    fileParallelism: true,
    // PgBouncer (transaction mode, 6432) and a Redis Cluster (7001-7006) for the scale-out tests: started once per run.
    globalSetup: ['test/global-setup.ts'],
  },
});
