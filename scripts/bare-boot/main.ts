/**
 * The bench's bare page (scripts/bench-browser.ts, browserBareBootMs): nothing but a Worker that
 * boots PGlite from the app's prebuilt data directory and answers one query. The page's own
 * clock reads when the answer arrives; the app's cold start is compared with this.
 */
const worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module' });
worker.onmessage = (ev: MessageEvent<{ ok: boolean; error?: string }>) => {
  const el = document.getElementById('state')!;
  el.textContent = ev.data.ok ? 'ready' : `failed: ${ev.data.error ?? ''}`;
  el.dataset.readyMs = String(performance.now());
};
