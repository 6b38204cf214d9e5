import { describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen } from '@testing-library/svelte';
import SessionPane from './SessionPane.svelte';
import { deadlockCycle, deadlockScenario, deadlockVictim } from '../fixtures/deadlock';
import { nowaitError, nowaitScenario } from '../fixtures/nowait';
import { skipLockedResult, skipLockedScenario } from '../fixtures/skipLocked';
import { XSS, hostileScript, hostileSnapshot } from '../fixtures/hostile';
import { ssiDoomed } from '../fixtures/serializable';
import type { EngineSnapshot } from '../../engine/types';
import { loadHighlighter } from '../state/highlighter.svelte';

function pane(snap: EngineSnapshot, name: string, script = deadlockScenario.script, cursor = 0, onrun?: (sql: string) => void) {
  const session = snap.sessions.find((s) => s.name === name)!;
  return render(SessionPane, { props: { session, script, cursor, clockMs: snap.clockMs, events: snap.events, onrun } });
}

describe('SessionPane', () => {
  it.each([
    { snap: deadlockScenario.frames[0], name: 'A', state: 'idle', words: 'idle' },
    { snap: deadlockCycle, name: 'A', state: 'waiting', words: 'waiting' },
    { snap: deadlockScenario.frames[2], name: 'A', state: 'idle-in-transaction', words: 'idle in transaction' },
    { snap: deadlockVictim, name: 'B', state: 'aborted', words: 'idle in transaction (aborted)' },
  ])('shows state $state with words and an icon', ({ snap, name, state, words }) => {
    pane(snap, name);
    const el = screen.getByTestId('session-pane');
    expect(el.dataset.session).toBe(name);
    expect(el.dataset.state).toBe(state);
    const label = screen.getByTestId('session-state').textContent!.trim();
    expect(label.endsWith(words)).toBe(true);
    expect(label.length).toBeGreaterThan(words.length); // icon + words, never colour alone
  });

  it('says what a waiting session waits for and who holds it', () => {
    pane(deadlockCycle, 'A', deadlockScenario.script, 7);
    expect(screen.getByTestId('wait-text').textContent).toContain('waits for ShareLock on transaction 746 held by session B');
    const current = document.querySelector('[aria-current="step"]');
    expect(current).toBeNull(); // item 7 is an "advance", not A's step
    expect(document.querySelector('[data-testid="script-line"][data-outcome="waiting"]')?.textContent).toContain(
      'balance + 100 WHERE id = 2',
    );
  });

  it('highlights the current step of the session', () => {
    pane(deadlockScenario.frames[4], 'A', deadlockScenario.script, 4);
    expect(document.querySelector('[aria-current="step"]')?.textContent).toContain('WHERE id = 2');
  });

  it('prints the deadlock error in PostgreSQL format with the SQLSTATE', () => {
    pane(deadlockVictim, 'B');
    const block = screen.getByTestId('pg-message');
    expect(block.dataset.sqlstate).toBe('40P01');
    expect(block.textContent).toBe(
      'ERROR:  deadlock detected\n' +
        'DETAIL:  Process 4102 waits for ShareLock on transaction 745; blocked by process 4101.\n' +
        '\tProcess 4101 waits for ShareLock on transaction 746; blocked by process 4102.\n' +
        'HINT:  See server log for query details.\n' +
        'CONTEXT:  while updating tuple (0,1) in relation "accounts"\n' +
        'SQLSTATE:  40P01\n',
    );
    expect(block.getAttribute('role')).toBe('alert');
  });

  it('prints the NOWAIT error', () => {
    pane(nowaitError, 'B', nowaitScenario.script, 4);
    expect(screen.getByTestId('pg-message').textContent).toContain('ERROR:  could not obtain lock on row in relation "accounts"');
    expect(screen.getByTestId('pg-message').textContent).toContain('SQLSTATE:  55P03');
  });

  it('shows the SKIP LOCKED result as a table', () => {
    pane(skipLockedResult, 'B', skipLockedScenario.script, 2);
    const cells = [...document.querySelectorAll('table.result td')].map((td) => td.textContent);
    expect(cells).toEqual(['2', 'send email', 'queued']);
    expect(screen.getByText('(1 row)')).toBeTruthy();
  });

  it('flags a doomed SERIALIZABLE transaction (its state is still idle in transaction)', () => {
    const session = ssiDoomed.sessions.find((s) => s.name === 'B')!;
    render(SessionPane, { props: { session, script: [], cursor: 0, clockMs: 0, events: [], doomed: true } });
    const el = screen.getByTestId('session-pane');
    expect(el.dataset.doomed).toBe('true');
    expect(el.dataset.state).toBe('idle-in-transaction');
    expect(screen.getByTestId('session-doomed').textContent).toContain('doomed → 40001');
    expect(screen.getByTestId('session-doomed').textContent).toContain('its next statement or COMMIT fails with 40001');
  });

  it('shows no doomed flag by default', () => {
    pane(deadlockScenario.frames[2], 'A');
    expect(screen.queryByTestId('session-doomed')).toBeNull();
    expect(screen.getByTestId('session-pane').dataset.doomed).toBeUndefined();
  });

  it('runs an ad-hoc statement', async () => {
    const onrun = vi.fn();
    pane(deadlockScenario.frames[0], 'A', deadlockScenario.script, 0, onrun);
    const input = screen.getByLabelText('Statement for session A');
    await fireEvent.input(input, { target: { value: 'SELECT 1;' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Run' }));
    expect(onrun).toHaveBeenCalledWith('SELECT 1;');
  });

  it('renders markup in SQL, results, notices and errors as text', async () => {
    await loadHighlighter('sql');
    pane(hostileSnapshot, 'A', hostileScript, 0);
    pane(hostileSnapshot, 'B', hostileScript, 0);
    expect(document.querySelector('script, img')).toBeNull();
    expect(document.body.textContent).toContain(XSS);
    expect(document.body.textContent).toContain(`ERROR:  ${XSS}`);
  });

  it('highlights SQL in the script and the scrollback with the editor syntax classes, text unchanged', async () => {
    await loadHighlighter('sql');
    pane(deadlockScenario.frames[4], 'A', deadlockScenario.script, 4);
    const current = document.querySelector('[aria-current="step"] code')!;
    const item = deadlockScenario.script.find((i) => i.index === 4)!;
    expect(current.textContent).toBe(item.sql);
    expect([...current.querySelectorAll('.syn-keyword')].map((e) => e.textContent)).toContain('UPDATE');
    const prompt = screen.getAllByTestId('scroll-entry')[0].querySelector('.prompt code')!;
    expect(prompt.querySelector('.syn-keyword')).not.toBeNull();
  });
});
