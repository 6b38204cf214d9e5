/** The browser's title-bar colour (`<meta name="theme-color">`) follows the app's theme, also when the learner toggles it. */
import { prefs } from '../state/prefs.svelte';

/** The title bar in each theme: the brand blue on light, the page background on dark (as in index.html and the manifest). */
export const THEME_COLORS = { light: '#2554c7', dark: '#12151a' } as const;

/** Keeps every theme-color meta on the current theme's colour; returns the cleanup. Before this runs, index.html's media queries pick one. */
export function followThemeColor(): () => void {
  return $effect.root(() => {
    $effect(() => {
      const colour = THEME_COLORS[prefs.theme];
      for (const meta of document.querySelectorAll<HTMLMetaElement>('meta[name="theme-color"]')) meta.content = colour;
    });
  });
}
