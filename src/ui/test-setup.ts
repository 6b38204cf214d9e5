/** Vitest setup for UI tests: automatic DOM cleanup and a fresh localStorage per test. */
import '@testing-library/svelte/vitest';
import { beforeEach } from 'vitest';

beforeEach(() => {
  localStorage.clear();
  document.documentElement.removeAttribute('data-theme');
  document.documentElement.classList.remove('presenter');
});

// jsdom has no ResizeObserver (Svelte's bind:clientWidth uses it); sizes stay 0, so views use their fallback size.
globalThis.ResizeObserver ??= class {
  observe() {}
  unobserve() {}
  disconnect() {}
};
