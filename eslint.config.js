// One lint configuration for the workspace; each package's `lint` script runs `eslint .` from its folder.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/src/generated/**', '**/.turbo/**', '**/results/**', '**/coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-console': ['error', { allow: ['warn', 'error'] }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    // Command-line programs and build scripts talk to the terminal.
    files: ['**/scripts/**', '**/cli/**', '**/bench/**', 'apps/example-cli/**', 'tooling/**'],
    rules: { 'no-console': 'off' },
  },
  {
    files: ['**/*.test.ts', '**/*.test.js', '**/test/**', '**/test-support/**', '**/test-utils/**'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
