/** Vitest setup for UI tests: automatic DOM cleanup and a fresh localStorage per test. */
import '@testing-library/svelte/vitest';
import { beforeEach } from 'vitest';

beforeEach(() => {
  localStorage.clear();
  document.documentElement.removeAttribute('data-theme');
  document.documentElement.classList.remove('presenter');
});
