// One lint configuration for the workspace; each package's `lint` script runs `eslint .` from its folder.
// TypeScript is linted with type information (typescript-eslint's projectService, as t3's tooling/eslint does).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '**/src/generated/**',
      '**/.turbo/**',
      '**/results/**',
      '**/coverage/**',
      '**/.tools/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: {
        projectService: {
          allowDefaultProject: ['*.js', 'tsup.library.ts', 'packages/*/vitest.config.ts', 'packages/*/tsup.config.ts'],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: true },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // Promises handed off by hand on the request path must be handled where they are handed off.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }],
      // Rejections pass on what they caught; async functions without await implement promise-returning interfaces.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingUnknown: true, allowThrowingAny: true },
      ],
      '@typescript-eslint/require-await': 'off',
      'no-console': ['error', { allow: ['warn', 'error'] }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    // The house's size rules (docs/architecture.md, Conventions): a file and a function a reader can hold at once.
    // Tests are excepted: a suite reads as one table of cases.
    files: ['**/*.ts', '**/*.mjs', '**/*.js'],
    ignores: ['**/*.test.ts', '**/test/**', '**/test-support/**', '**/test-utils/**'],
    rules: {
      'max-lines': ['error', { max: 260 }],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // Plain JavaScript (the example app, build scripts, this file): no type information to lint with.
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // CommonJS files (the fresh apps of the registry test) load modules with require().
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Configuration is read and validated once, in apps/server/src/config/load.ts (as t3's restrictEnvAccess).
    files: ['**/*.ts'],
    ignores: [
      'apps/server/src/config/load.ts',
      '**/*.test.ts',
      '**/test/**',
      '**/test-support/**',
      '**/test-utils/**',
      '**/scripts/**',
      'tooling/**',
      '**/*.config.ts',
    ],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Read configuration in apps/server/src/config/load.ts only.' },
      ],
    },
  },
  {
    // Command-line programs and build scripts talk to the terminal.
    files: ['**/scripts/**', '**/cli/**', 'apps/example-cli/**', 'tooling/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // Tests use matchers typed `any` (expect.any) and browser globals inside page.evaluate.
    files: ['**/*.test.ts', '**/*.test.js', '**/test/**', '**/test-support/**', '**/test-utils/**'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
    },
  },
);
