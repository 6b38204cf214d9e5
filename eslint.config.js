import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import svelte from 'eslint-plugin-svelte';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'test-results/', 'src/worker/pgdata.tgz'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...svelte.configs['flat/recommended'],
  {
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // {' '} keeps deliberate spaces between inline elements in the psql-like panes.
      'svelte/no-useless-mustaches': 'off',
      // Plain Maps in runes classes are caches that must not trigger renders.
      'svelte/prefer-svelte-reactivity': 'warn',
    },
  },
  {
    files: ['**/*.svelte', '**/*.svelte.ts'],
    languageOptions: { parserOptions: { parser: tseslint.parser } },
  },
  {
    // The lock model is pure: no PGlite, DOM frameworks or drawing libraries.
    files: ['src/engine/locks/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['@electric-sql/*', 'svelte', 'svelte/*', 'd3', 'd3-*'] }],
    },
  },
);
