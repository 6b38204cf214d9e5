import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { VitePWA } from 'vite-plugin-pwa';
import { CONTENT_SECURITY_POLICY } from './src/build/csp';
import { lessonCatalog } from './src/build/lessonCatalog';

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

/**
 * The service worker (Workbox, generated at build time): it precaches every built file, so a second
 * visit starts without the network and every route works offline. PGlite's wasm (~9 MB), its data
 * and the lessons' database archive are the largest files, hence the raised size limit. An update
 * waits until the learner reloads (registerType 'prompt'; src/ui/offline/ shows the toast); the
 * manifest and icons are static files in public/. Registration is the app's own module, never an
 * inline script, so the Content-Security-Policy stays as it is.
 */
function serviceWorker(): Plugin[] {
  return VitePWA({
    registerType: 'prompt',
    injectRegister: false,
    manifest: false,
    workbox: {
      globPatterns: ['**/*.{html,js,css,wasm,data,tgz,gz,svg,png,webmanifest,txt}'],
      maximumFileSizeToCacheInBytes: 48 * 1024 * 1024,
      navigateFallback: 'index.html',
      cleanupOutdatedCaches: true,
      // The first visit is served by the worker as soon as it is installed, so it keeps working if the network drops before a reload.
      clientsClaim: true,
    },
  });
}

/**
 * The engine Worker's starter (src/ui/earlyEngine.ts) is an entry of its own, loaded by an `async`
 * script tag ahead of the app's bundle: it is a few hundred bytes, so the Worker (and with it
 * PGlite's downloads) starts while the bundle still downloads. The bundle imports the same chunk,
 * so the module runs once.
 */
function earlyEngine(): Plugin {
  return {
    name: 'lockstep-early-engine',
    apply: 'build',
    config: () => ({ build: { rollupOptions: { input: { index: 'index.html', early: 'src/ui/earlyEngine.ts' } } } }),
    transformIndexHtml: {
      order: 'post',
      handler(html, ctx) {
        const chunk = Object.values(ctx.bundle ?? {}).find((c) => c.type === 'chunk' && c.isEntry && c.name === 'early');
        if (!chunk) throw new Error('lockstep-early-engine: no "early" entry chunk in the bundle');
        // Before the bundle's own script and preloads, after the CSP meta: the browser opens a few
        // connections per host, and a starter queued behind the bundle's dozen requests would
        // start the Worker only when they are done.
        const tag = `<script type="module" crossorigin async src="./${chunk.fileName}"></script>\n    `;
        const at = html.indexOf('<script type="module"');
        if (at < 0) throw new Error('lockstep-early-engine: no module script in index.html');
        return html.slice(0, at) + tag + html.slice(at);
      },
    },
  };
}

// PGlite ships its own wasm/data files; keep it out of dependency pre-bundling so they load as assets.
// (libpg-query must be pre-bundled: its CommonJS entry does not load raw in dev mode.)
export default defineConfig({
  plugins: [svelte(), lessonCatalog(fileURLToPath(new URL('.', import.meta.url))), contentSecurityPolicy(), earlyEngine(), serviceWorker()],
  base: './',
  optimizeDeps: { exclude: ['@electric-sql/pglite'] },
  worker: { format: 'es' },
  build: { target: 'es2022', sourcemap: true },
  // The preview server (used by the e2e suite) sends the same policy as a header, so the engine workers run under it too.
  preview: { headers: { 'Content-Security-Policy': CONTENT_SECURITY_POLICY } },
});
