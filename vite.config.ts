import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// PGlite ships its own wasm/data files; keep it out of dependency pre-bundling so they load as assets.
// (libpg-query must be pre-bundled: its CommonJS entry does not load raw in dev mode.)
export default defineConfig({
  plugins: [svelte()],
  base: './',
  optimizeDeps: { exclude: ['@electric-sql/pglite'] },
  worker: { format: 'es' },
  build: { target: 'es2022', sourcemap: true },
});
