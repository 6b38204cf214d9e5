import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// PGlite ships its own wasm/data files; keep it out of dependency pre-bundling so they load as assets.
export default defineConfig({
  plugins: [svelte()],
  base: './',
  optimizeDeps: { exclude: ['@electric-sql/pglite', 'libpg-query'] },
  worker: { format: 'es' },
  build: { target: 'es2022', sourcemap: true },
});
