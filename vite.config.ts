import { defineConfig, type Plugin } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { CONTENT_SECURITY_POLICY } from './src/build/csp';

/** Writes the Content-Security-Policy `<meta>` into the built index.html (dev mode keeps Vite's HMR client unrestricted). */
function contentSecurityPolicy(): Plugin {
  return {
    name: 'lockstep-csp',
    apply: 'build',
    transformIndexHtml: () => [
      { tag: 'meta', attrs: { 'http-equiv': 'Content-Security-Policy', content: CONTENT_SECURITY_POLICY }, injectTo: 'head-prepend' },
    ],
  };
}

// PGlite ships its own wasm/data files; keep it out of dependency pre-bundling so they load as assets.
// (libpg-query must be pre-bundled: its CommonJS entry does not load raw in dev mode.)
export default defineConfig({
  plugins: [svelte(), contentSecurityPolicy()],
  base: './',
  optimizeDeps: { exclude: ['@electric-sql/pglite'] },
  worker: { format: 'es' },
  build: { target: 'es2022', sourcemap: true },
  // The preview server (used by the e2e suite) sends the same policy as a header, so the engine workers run under it too.
  preview: { headers: { 'Content-Security-Policy': CONTENT_SECURITY_POLICY } },
});
