import { describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen } from '@testing-library/svelte';
import LockTable from './LockTable.svelte';
import DataView from './DataView.svelte';
import Clock from './Clock.svelte';
import Timeline from './Timeline.svelte';
import ServerLog from './ServerLog.svelte';
import { deadlockCycle, deadlockScenario, deadlockVictim } from '../fixtures/deadlock';
import { ssiDoomed } from '../fixtures/serializable';
import { skipLockedResult } from '../fixtures/skipLocked';
import { XSS, hostileSnapshot } from '../fixtures/hostile';

describe('LockTable', () => {
  it('lists pg_locks with waiting rows first', () => {
    render(LockTable, { props: { locks: deadlockCycle.locks } });
    const rows = [...screen.getByTestId('lock-table').querySelectorAll('tbody tr')] as HTMLElement[];
    expect(rows).toHaveLength(deadlockCycle.locks.length);
    expect(rows.slice(0, 2).map((r) => r.dataset.granted)).toEqual(['false', 'false']);
    expect(rows[0].textContent).toContain('transactionid');
    expect(rows[0].textContent).toContain('746');
    expect(rows[0].textContent).toContain('ShareLock');
    const tuple = rows.find((r) => r.textContent!.includes('tuple'))!;
    expect(tuple.textContent).toContain('accounts');
    expect(tuple.textContent).toContain('ExclusiveLock');
  });
  it('adds the SIRead locks as SIReadLock rows after the others, committed ones marked, with an explanation', () => {
    render(LockTable, { props: { locks: ssiDoomed.locks, sessions: ssiDoomed.sessions, ssi: ssiDoomed.ssi } });
    const all = [...screen.getByTestId('lock-table').querySelectorAll('tbody tr')] as HTMLElement[];
    expect(all).toHaveLength(ssiDoomed.locks.length + 4);
    const si = screen.getAllByTestId('siread-lock-row');
    expect(all.slice(-4)).toEqual(si);
    const cells = (r: HTMLElement) => [...r.querySelectorAll('td')].map((td) => td.textContent!.replace(/\s+/g, ' ').trim());
    expect(cells(si[0])).toEqual([
      'relation',
      'doctors',
      '',
      '',
      '',
      '',
      'SIReadLock (never blocks)',
      '✓ t (granted)',
      '6101',
      'A committed',
    ]);
    expect(cells(si[3])).toEqual(['page', 'doctors_pkey', '1', '', '', '', 'SIReadLock (never blocks)', '✓ t (granted)', '6102', 'B']);
    expect(si.map((r) => [r.dataset.session, r.dataset.committed, r.dataset.mode, r.dataset.locktype])).toEqual([
      ['A', 'true', 'SIReadLock', 'relation'],
      ['A', 'true', 'SIReadLock', 'page'],
      ['B', 'false', 'SIReadLock', 'relation'],
      ['B', 'false', 'SIReadLock', 'page'],
    ]);
    expect(si[0].title).toContain('never blocks anyone');
    expect(si[0].title).toContain('has committed');
    expect(si[2].title).not.toContain('has committed');
    expect(screen.getByTestId('siread-note').textContent).toContain('never block');
  });
  it('has no SIRead note without serializable transactions', () => {
    render(LockTable, { props: { locks: deadlockCycle.locks } });
    expect(screen.queryByTestId('siread-note')).toBeNull();
    expect(screen.queryAllByTestId('siread-lock-row')).toHaveLength(0);
  });
  it('says when there are no locks', () => {
    render(LockTable, { props: { locks: [] } });
    expect(screen.getByTestId('lock-table-empty').textContent).toBe('No locks.');
  });
});

describe('DataView', () => {
  it('shows row-lock badges with owner and mode', () => {
    render(DataView, { props: { tables: skipLockedResult.tables, sessions: ['A', 'B'] } });
    const badges = screen.getAllByTestId('row-lock-badge');
    expect(badges.map((b) => b.textContent!.trim())).toEqual(['A: FOR UPDATE', 'B: FOR UPDATE']);
    expect(screen.getByText('NULL')).toBeTruthy();
  });
  it('switches to a session view when the backend supplies one', async () => {
    const views = { B: [{ ...skipLockedResult.tables[0], rows: skipLockedResult.tables[0].rows.slice(0, 1) }] };
    render(DataView, { props: { tables: skipLockedResult.tables, sessions: ['A', 'B'], views } });
    expect(screen.getByTestId('data-table').querySelectorAll('tbody tr')).toHaveLength(3);
    await fireEvent.change(screen.getByTestId('data-seen-by'), { target: { value: 'B' } });
    expect(screen.getByTestId('data-table').querySelectorAll('tbody tr')).toHaveLength(1);
  });
  it('renders markup in data as text', () => {
    render(DataView, { props: { tables: hostileSnapshot.tables, sessions: [] } });
    expect(document.querySelector('script, img')).toBeNull();
    expect(screen.getByTestId('data-view').textContent).toContain(XSS);
  });
});

describe('Clock', () => {
  it('shows virtual time, countdowns and advances to the next timer', async () => {
    const onadvance = vi.fn();
    render(Clock, { props: { snapshot: deadlockCycle, onadvance } });
    expect(screen.getByTestId('clock').textContent).toBe('t = 2.1 s');
    const timers = screen.getAllByTestId('clock-timer');
    expect(timers.map((t) => [t.dataset.session, t.dataset.kind])).toEqual([
      ['B', 'deadlock_timeout'],
      ['B', 'lock_timeout'],
    ]);
    expect(timers[0].textContent).toContain('deadlock_timeout in 1 s');
    await fireEvent.click(screen.getByTestId('advance-timer'));
    expect(onadvance).toHaveBeenCalledOnce();
  });
  it('disables the advance button without timers', () => {
    render(Clock, { props: { snapshot: deadlockVictim, onadvance: () => {} } });
    expect((screen.getByTestId('advance-timer') as HTMLButtonElement).disabled).toBe(true);
  });
});

describe('Timeline', () => {
  it('draws waits and marks, and jumps on click and Enter', async () => {
    const onjump = vi.fn();
    render(Timeline, { props: { snapshot: deadlockScenario.frames[10], onjump } });
    expect(screen.getAllByTestId('timeline-wait')).toHaveLength(2);
    const marks = screen.getAllByTestId('timeline-mark');
    expect(marks.map((m) => m.dataset.kind)).toEqual(['deadlock', 'failed', 'grant', 'commit', 'rollback']);
    expect(marks[0].getAttribute('aria-label')).toContain('session B is the victim');
    await fireEvent.click(marks[3]);
    expect(onjump).toHaveBeenLastCalledWith(3200);
    await fireEvent.keyDown(marks[0], { key: 'Enter' });
    expect(onjump).toHaveBeenLastCalledWith(3100);
  });
});

describe('ServerLog', () => {
  it('shows the log lines as text', () => {
    render(ServerLog, { props: { lines: [...deadlockVictim.serverLog, XSS] } });
    const log = screen.getByTestId('server-log');
    expect(log.textContent).toContain('ERROR:  deadlock detected');
    expect(log.textContent).toContain(XSS);
    expect(document.querySelector('script, img')).toBeNull();
  });
  it('says when the log is empty', () => {
    render(ServerLog, { props: { lines: [] } });
    expect(screen.getByTestId('server-log').textContent).toBe('The server log is empty.');
  });
});
