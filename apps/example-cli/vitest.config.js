import { defineConfig } from 'vitest/config';

// Each test starts the CLI as a node process several times: allow for a busy machine.
export default defineConfig({ test: { testTimeout: 30_000 } });
