import { afterEach, describe, expect, it } from 'vitest';
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import App from './App.svelte';
import { staticCatalog } from './backend';
import { fixtureBackend } from './fixtures/backend';
import { deadlockScenario } from './fixtures/deadlock';
import { prefs } from './state/prefs.svelte';

const catalog = staticCatalog([
  { id: 'deadlock', title: { en: 'Transfer deadlock', ru: 'Взаимоблокировка переводов' }, topic: 'deadlocks', steps: 10, minutes: 5 },
  { id: 'nowait', title: 'NOWAIT', topic: { en: 'row locks', ru: 'блокировки строк' }, steps: 4 },
]);

afterEach(() => {
  prefs.setLang('en');
  prefs.done = [];
  location.hash = '';
});

/** Tests that load a lazy chunk (the lab's CodeMirror, the panes' SQL grammar) transform it first: slow on a busy machine. */
const LAZY_CHUNK_MS = 20_000;

describe('App', () => {
  it('lists lessons and says the engine is not connected without a backend', async () => {
    location.hash = '#/';
    render(App, { props: { catalog, createBackend: null } });
    expect(screen.getByTestId('engine-not-connected').textContent).toContain('Engine not connected');
    await waitFor(() => expect(screen.getAllByTestId('lesson-row')).toHaveLength(2));
    expect(screen.getAllByTestId('lesson-row')[0].textContent).toContain('Transfer deadlock');
    expect(screen.getAllByTestId('lesson-row')[0].dataset.done).toBe('false');
  });

  it('switches the language of all UI text and remembers it', async () => {
    location.hash = '#/';
    render(App, { props: { catalog, createBackend: null } });
    await waitFor(() => screen.getAllByTestId('lesson-row'));
    await fireEvent.change(screen.getByTestId('lang-switch'), { target: { value: 'ru' } });
    expect(localStorage.getItem('lockstep.lang')).toBe('ru');
    expect(document.documentElement.lang).toBe('ru');
    expect(screen.getByTestId('engine-not-connected').textContent).toContain('Движок не подключён');
    expect(screen.getAllByTestId('lesson-row')[0].textContent).toContain('Взаимоблокировка переводов');
    expect(screen.getAllByTestId('lesson-row')[1].textContent).toContain('Не пройден');
  });

  it(
    'plays a lesson: next / prev / reset buttons and keys, URL follows the step, progress is stored',
    async () => {
      location.hash = '#/lessons/deadlock/step/0';
      render(App, { props: { catalog, createBackend: () => fixtureBackend(deadlockScenario) } });
      await waitFor(() => expect(screen.getByTestId('step-position').textContent).toBe('Step 0 of 10'));
      await fireEvent.click(screen.getByTestId('step-next'));
      await waitFor(() => expect(screen.getByTestId('step-position').textContent).toBe('Step 1 of 10'));
      // The address bar follows once the step's frame is drawn.
      await waitFor(() => expect(location.hash).toBe('#/lessons/deadlock/step/1'));
      await fireEvent.keyDown(window, { key: 'ArrowRight' });
      await waitFor(() => expect(screen.getByTestId('step-position').textContent).toBe('Step 2 of 10'));
      await fireEvent.click(screen.getByTestId('step-prev'));
      await waitFor(() => expect(screen.getByTestId('step-position').textContent).toBe('Step 1 of 10'));
      await fireEvent.keyDown(window, { key: 'r' });
      await waitFor(() => expect(screen.getByTestId('step-position').textContent).toBe('Step 0 of 10'));
      // Jump by URL to the cycle, then to the end: the lesson counts as done.
      location.hash = '#/lessons/deadlock/step/7';
      window.dispatchEvent(new HashChangeEvent('hashchange'));
      await waitFor(() => expect(screen.getAllByTestId('wfg-edge').every((e) => e.dataset.inCycle === 'true')).toBe(true));
      expect(screen.getAllByTestId('session-pane').map((p) => p.dataset.state)).toEqual(['waiting', 'waiting']);
      location.hash = '#/lessons/deadlock/step/10';
      window.dispatchEvent(new HashChangeEvent('hashchange'));
      await waitFor(() => expect(prefs.isDone('deadlock')).toBe(true));
      expect(JSON.parse(localStorage.getItem('lockstep.done')!)).toEqual(['deadlock']);
    },
    LAZY_CHUNK_MS,
  );

  it('opens the shortcuts dialog with ? and closes it with Escape', async () => {
    location.hash = '#/lessons/deadlock/step/0';
    render(App, { props: { catalog, createBackend: () => fixtureBackend(deadlockScenario) } });
    await waitFor(() => screen.getByTestId('step-position'));
    await fireEvent.keyDown(window, { key: '?' });
    const dialog = screen.getByTestId('shortcuts-dialog');
    expect(dialog.getAttribute('role')).toBe('dialog');
    await fireEvent.keyDown(dialog, { key: 'Escape' });
    expect(screen.queryByTestId('shortcuts-dialog')).toBeNull();
  });

  it(
    'shows the scenario lab (loaded on first visit)',
    async () => {
      location.hash = '#/lab';
      render(App, { props: { catalog, createBackend: null } });
      expect((await screen.findByTestId('lab', {}, { timeout: 5000 })).textContent).toContain('Scenario lab');
      expect(screen.getByTestId('lab-editor')).toBeTruthy();
    },
    LAZY_CHUNK_MS,
  );
  it(
    'shows an embed without the site header: previous / next step the lesson, the look comes from the URL for this page only',
    async () => {
      location.hash = '#/embed/lessons/deadlock?lang=ru';
      render(App, { props: { catalog, createBackend: () => fixtureBackend(deadlockScenario) } });
      const embed = await screen.findByTestId('embed-player', {}, { timeout: 5000 });
      await waitFor(() => expect(screen.getByTestId('step-position').textContent).toBe('Шаг 0 из 10'));
      expect(embed.textContent).toContain('Взаимоблокировка переводов');
      expect(document.querySelector('header.top')?.closest('.app')?.classList.contains('embed')).toBe(true);
      expect(localStorage.getItem('lockstep.lang')).toBeNull();
      await fireEvent.click(screen.getByTestId('step-next'));
      await waitFor(() => expect(screen.getByTestId('step-position').textContent).toBe('Шаг 1 из 10'));
      await fireEvent.keyDown(window, { key: 'ArrowLeft' });
      await waitFor(() => expect(screen.getByTestId('step-position').textContent).toBe('Шаг 0 из 10'));
      expect(screen.getByTestId('embed-open-full').getAttribute('href')).toBe('./#/lessons/deadlock/step/0');
      expect(location.hash).toBe('#/embed/lessons/deadlock?lang=ru');
    },
    LAZY_CHUNK_MS,
  );

  it(
    'says what is wrong with a damaged embed link',
    async () => {
      location.hash = '#/embed/lab?s=%%%';
      render(App, { props: { catalog, createBackend: () => fixtureBackend(deadlockScenario) } });
      const error = await screen.findByTestId('embed-error', {}, { timeout: 5000 });
      expect(error.textContent).toContain('This embed link is damaged');
    },
    LAZY_CHUNK_MS,
  );
});
