import { afterEach, describe, expect, it } from 'vitest';
import { flushSync } from 'svelte';
import { prefs } from '../state/prefs.svelte';
import { THEME_COLORS, followThemeColor } from './themeColor.svelte';

afterEach(() => {
  document.head.innerHTML = '';
  prefs.theme = 'light';
});

describe('followThemeColor', () => {
  it('puts the current theme colour on every theme-color meta and follows a toggle', () => {
    document.head.innerHTML =
      '<meta name="theme-color" content="#000" media="(prefers-color-scheme: light)"><meta name="theme-color" content="#000" media="(prefers-color-scheme: dark)">';
    prefs.theme = 'light';
    const stop = followThemeColor();
    flushSync();
    const contents = () => [...document.querySelectorAll('meta[name="theme-color"]')].map((m) => m.getAttribute('content'));
    expect(contents()).toEqual([THEME_COLORS.light, THEME_COLORS.light]);
    prefs.toggleTheme();
    flushSync();
    expect(contents()).toEqual([THEME_COLORS.dark, THEME_COLORS.dark]);
    stop();
  });
});
