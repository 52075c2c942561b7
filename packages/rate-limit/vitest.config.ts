import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // A Redis Cluster (7001-7006) for the store's cluster tests: started once per run.
    globalSetup: ['src/test-utils/global-setup.ts'],
  },
});
