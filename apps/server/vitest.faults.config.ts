import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 90_000,
    // One file at a time: each starts, stops and fills services of its own (ports reserved for it), and the machine
    // is shared.
    fileParallelism: false,
  },
});
