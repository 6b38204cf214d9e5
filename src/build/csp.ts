/**
 * The page's Content-Security-Policy, one string for both places that deliver it: the `<meta>`
 * that `vite build` writes into index.html (static hosting needs nothing else) and the header
 * of `vite preview`, which also covers the engine's module workers (a worker loaded from a URL
 * does not inherit the page's policy; its own response header is what applies inside it).
 *
 * Only the app's own files run: no inline script, no eval; WebAssembly compilation (PGlite,
 * libpg-query) is the one exception, through 'wasm-unsafe-eval'. Styles allow inline
 * attributes because Svelte's `style:` directives and CodeMirror's theme write them; a style
 * cannot run script.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "style-src 'self' 'unsafe-inline'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');
