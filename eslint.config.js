import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import svelte from 'eslint-plugin-svelte';
import globals from 'globals';

/** Boundaries between the engine's layers (docs/engine.md); tests/lint/boundaries.test.ts proves each one fires. */
const ENGINE_PATTERNS = [
  { regex: '(^|/)(scenario|ui|sim)(/|$)', message: 'src/engine imports nothing from src/scenario, src/sim or src/ui.' },
];
const MODEL_PATTERNS = [
  {
    group: ['@electric-sql/*', 'svelte', 'svelte/*', 'd3', 'd3-*'],
    message: 'The lock model is pure: no PGlite, DOM frameworks or drawing libraries.',
  },
  { regex: '(^|/)pg(/|$)', message: 'model/ consumes facts; only pg/ talks to PGlite.' },
  { regex: '^\\.\\./(engine|context|statement|transaction|scheduler)$', message: 'model/ does not depend on the orchestrator.' },
];
const UI_PATTERNS = [
  {
    regex: '(^|/)engine/(engine|context|statement|transaction|scheduler)$',
    message: 'The UI does not drive the engine directly: go through src/worker or src/sim.',
  },
  { regex: '(^|/)engine/pg(/|$)', message: 'The UI does not talk to PGlite: go through src/worker.' },
];

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
    // The engine stands alone: the scenario layer, the simulator adapters and the UI build on it.
    files: ['src/engine/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: ENGINE_PATTERNS }] },
  },
  {
    // The lock model is pure and synchronous: no PGlite (pg/ holds every call to it), no
    // orchestrator, no DOM frameworks or drawing libraries.
    files: ['src/engine/model/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [...ENGINE_PATTERNS, ...MODEL_PATTERNS] }] },
  },
  {
    // The UI reaches the engine through the worker and src/sim; it reads engine types and the pure model only.
    files: ['src/ui/**/*.ts', 'src/ui/**/*.svelte'],
    rules: { 'no-restricted-imports': ['error', { patterns: UI_PATTERNS }] },
  },
);
