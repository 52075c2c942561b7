import { defineConfig } from 'vitest/config';
import { define } from './tsup.config.js';

// The constants tsup replaces at build (the version), so that tests of the sources see the same values.
export default defineConfig({ define });
