import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { lessonCatalog } from './src/build/lessonCatalog';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          environment: 'node',
          include: ['src/**/*.test.ts', 'tests/**/*.test.ts'],
          exclude: ['src/ui/**', 'tests/e2e/**', 'node_modules/**'],
          globalSetup: ['tests/setup/postgres.ts'],
          // Real PostgreSQL decides deadlock victims on wall-clock timers: running test files in
          // parallel on 2 cores can stall a session past deadlock_timeout and change the outcome.
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        plugins: [svelte(), lessonCatalog(fileURLToPath(new URL('.', import.meta.url)))],
        resolve: { conditions: ['browser'] },
        test: {
          name: 'ui',
          environment: 'jsdom',
          include: ['src/ui/**/*.test.ts'],
          setupFiles: ['src/ui/test-setup.ts'],
        },
      },
    ],
  },
});
