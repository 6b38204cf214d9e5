import { describe, expect, it } from 'vitest';
import { fireEvent, render, screen, within } from '@testing-library/svelte';
import LockMatrix from './LockMatrix.svelte';
import { deadlockCycle, deadlockScenario } from '../fixtures/deadlock';
import { LOCK_CONFLICTS, TABLE_LOCK_MODES } from '../../engine/model/locks/modes';

describe('LockMatrix', () => {
  it('renders the 8×8 and 4×4 tables of modes.ts', () => {
    render(LockMatrix, { props: { snapshot: deadlockScenario.frames[0] } });
    const table = within(screen.getByTestId('lock-matrix-table')).getAllByTestId('matrix-cell');
    const row = within(screen.getByTestId('lock-matrix-row')).getAllByTestId('matrix-cell');
    expect(table).toHaveLength(64);
    expect(row).toHaveLength(16);
    for (const cell of table) {
      const req = cell.dataset.requested as (typeof TABLE_LOCK_MODES)[number];
      const held = cell.dataset.held as (typeof TABLE_LOCK_MODES)[number];
      expect(cell.classList.contains('conflict')).toBe(LOCK_CONFLICTS[req].includes(held));
    }
    expect(document.querySelectorAll('[data-conflict="true"]')).toHaveLength(0);
  });

  it('lights ShareLock (requested) vs ExclusiveLock (held) for a transactionid wait', () => {
    render(LockMatrix, { props: { snapshot: deadlockCycle } });
    const lit = within(screen.getByTestId('lock-matrix-table'))
      .getAllByTestId('matrix-cell')
      .filter((c) => c.dataset.conflict === 'true');
    expect(lit.map((c) => [c.dataset.requested, c.dataset.held])).toEqual([['ShareLock', 'ExclusiveLock']]);
    expect(lit[0].getAttribute('aria-label')).toContain('Requested SHARE vs held EXCLUSIVE: conflict.');
    const rowLit = within(screen.getByTestId('lock-matrix-row'))
      .getAllByTestId('matrix-cell')
      .filter((c) => c.dataset.conflict === 'true');
    expect(rowLit.map((c) => [c.dataset.requested, c.dataset.held])).toEqual([['ForNoKeyUpdate', 'ForNoKeyUpdate']]);
  });

  it('explains a focused cell and moves with the arrow keys', async () => {
    render(LockMatrix, { props: { snapshot: deadlockCycle } });
    const cells = within(screen.getByTestId('lock-matrix-table')).getAllByTestId('matrix-cell');
    expect(cells.filter((c) => c.tabIndex === 0)).toHaveLength(1);
    const re = cells.find((c) => c.dataset.requested === 'RowExclusiveLock' && c.dataset.held === 'ShareLock')!;
    re.focus();
    await fireEvent.focus(re);
    expect(document.body.textContent).toContain('UPDATE, DELETE, INSERT, MERGE.');
    expect(document.body.textContent).toContain('CREATE INDEX (without CONCURRENTLY)');
    await fireEvent.keyDown(re, { key: 'ArrowRight' });
    expect(document.activeElement).toBe(
      cells.find((c) => c.dataset.requested === 'RowExclusiveLock' && c.dataset.held === 'ShareRowExclusiveLock'),
    );
  });
});
