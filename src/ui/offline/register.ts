/**
 * Registers the service worker that vite-plugin-pwa generates (Workbox precaching every built file)
 * and mounts the update toast. A module of the app's own bundle, not an inline script, so it runs
 * under the Content-Security-Policy (`script-src 'self'`, `worker-src 'self'`).
 */
/// <reference types="vite-plugin-pwa/vanillajs" />
import { mount } from 'svelte';
import { registerSW } from 'virtual:pwa-register';
import UpdateToast from './UpdateToast.svelte';
import { appUpdate } from './update.svelte';
import { followThemeColor } from './themeColor.svelte';
import { settled } from './settled';

/**
 * Registers the service worker (production builds, browsers that have one) once the page has
 * settled (`engineAnswered`: the engine Worker's first answer), mounts the update toast and keeps
 * the title-bar colour on the theme.
 */
export function startOffline(engineAnswered: Promise<void>): void {
  followThemeColor();
  if (!import.meta.env.PROD || !('serviceWorker' in navigator)) return;
  void settled(engineAnswered).then(register);
}

function register(): void {
  const host = document.createElement('div');
  host.className = 'update-host';
  document.body.append(host);
  mount(UpdateToast, { target: host });
  const update = registerSW({
    immediate: true,
    // A new version waits (registerType 'prompt'); the toast lets the learner choose when to reload.
    onNeedRefresh: () => appUpdate.announce(() => update(true)),
    // The reload is ours (below): Workbox reloads only pages that had a controller when they registered, not a first visit's page.
    onNeedReload: () => undefined,
    // Without a service worker the app still runs online; a warning keeps the reason visible to whoever looks.
    onRegisterError: (e: unknown) => console.warn('Lockstep: the service worker could not be registered; offline use is off.', e),
  });
  // The first install takes control without a reload (clientsClaim); only a version the learner asked for reloads the page.
  navigator.serviceWorker.addEventListener('controllerchange', () => {
    if (appUpdate.requested) window.location.reload();
  });
}
