/** When the service worker's first install may start (register.ts). */

/** A page that opens no engine registers this long after its load event. */
const SETTLE_MS = 8000;

/**
 * Resolves when the page has settled enough for the service worker's first install: its precache
 * downloads every built file (about 22 MB: PGlite's wasm and data, the prebuilt cluster, the
 * parser) and writes it to Cache Storage, which on a two-core machine cost about 0.75 s of CPU and
 * shared the network with the engine's own downloads when it ran during the engine's boot
 * (docs/benchmarks.md, issue 13's tenth pass). So it waits for the engine's first answer (a lesson
 * is on screen), or SETTLE_MS after the load event on a page that opens none, then an idle period.
 */
export function settled(engineAnswered: Promise<void>): Promise<void> {
  const loaded = new Promise<void>((ok) =>
    document.readyState === 'complete' ? ok() : window.addEventListener('load', () => ok(), { once: true }),
  );
  const fallback = loaded.then(() => new Promise<void>((ok) => setTimeout(ok, SETTLE_MS)));
  return Promise.race([engineAnswered, fallback]).then(
    () =>
      new Promise<void>((ok) => ('requestIdleCallback' in window ? requestIdleCallback(() => ok(), { timeout: 2000 }) : setTimeout(ok, 0))),
  );
}
