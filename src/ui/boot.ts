/** Mounts the app. The lead passes the real catalog and backend factory (engine Worker). */
import { mount } from 'svelte';
import App from './App.svelte';
import type { LessonCatalog, PlayerBackend } from './backend';
import type { Explorer } from './lab/explorer';

export interface BootOptions {
  target: HTMLElement;
  catalog: LessonCatalog;
  /** null until the engine Worker is wired: the app then says "engine not connected". */
  createBackend: (() => PlayerBackend) | null;
  /** The lab's interleaving explorer (its own engine Worker); omitted: exploring is unavailable. */
  createExplorer?: (() => Explorer) | null;
}

/** Mounts <App> into `target`; in dev builds also enables the `#/dev/fixtures` page. */
export function boot({ target, catalog, createBackend, createExplorer = null }: BootOptions) {
  return mount(App, {
    target,
    props: {
      catalog,
      createBackend,
      createExplorer,
      devFixtures: import.meta.env.DEV ? () => import('./fixtures/DevFixtures.svelte') : undefined,
    },
  });
}
