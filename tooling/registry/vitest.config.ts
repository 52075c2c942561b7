import { defineConfig } from 'vitest/config';

// Installs from a registry and type-checks apps: generous but bounded limits on a busy machine.
export default defineConfig({ test: { testTimeout: 60_000, hookTimeout: 120_000 } });
