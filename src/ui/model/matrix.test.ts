import { describe, expect, it } from 'vitest';
import { cellKey, heldRowModes, heldTableModes, holdersByMode, rowMatrixLights, tableMatrixLights } from './matrix';
import { deadlockCycle, deadlockScenario, deadlockVictim } from '../fixtures/deadlock';
import { nowaitError } from '../fixtures/nowait';

describe('tableMatrixLights', () => {
  it('lights ShareLock (requested) vs ExclusiveLock (held) for a transactionid wait', () => {
    const l = tableMatrixLights(deadlockCycle);
    expect([...l.requested]).toEqual(['ShareLock']);
    expect([...l.held]).toEqual(['ExclusiveLock']);
    expect([...l.conflicts]).toEqual([cellKey('ShareLock', 'ExclusiveLock')]);
    expect(l.waits.map((w) => w.session)).toEqual(['A', 'B']);
  });
  it.each([
    { name: 'nothing waits before the first wait', snap: deadlockScenario.frames[4] },
    { name: 'nothing waits once the deadlock is resolved', snap: deadlockVictim },
    { name: 'NOWAIT never waits', snap: nowaitError },
  ])('$name', ({ snap }) => {
    const l = tableMatrixLights(snap);
    expect(l.waits).toEqual([]);
    expect(l.conflicts.size).toBe(0);
  });
});

describe('rowMatrixLights', () => {
  it('derives the row strength from the tuple lock the waiter holds', () => {
    const l = rowMatrixLights(deadlockCycle);
    // A waits for row (0,2) locked by B's UPDATE (no key): FOR NO KEY UPDATE vs FOR NO KEY UPDATE.
    expect(l.waits).toEqual([
      { session: 'A', requested: 'ForNoKeyUpdate', held: [{ session: 'B', mode: 'ForNoKeyUpdate', conflict: true }] },
      { session: 'B', requested: 'ForNoKeyUpdate', held: [{ session: 'A', mode: 'ForNoKeyUpdate', conflict: true }] },
    ]);
    expect([...l.conflicts]).toEqual([cellKey('ForNoKeyUpdate', 'ForNoKeyUpdate')]);
  });
});

describe('held modes', () => {
  it('lists granted table modes and row strengths per session', () => {
    const t = heldTableModes(deadlockCycle);
    expect([...t.get('A')!].sort()).toEqual(['ExclusiveLock', 'RowExclusiveLock']);
    expect([...heldRowModes(nowaitError).get('A')!]).toEqual(['ForUpdate']);
    expect(holdersByMode(t).get('ExclusiveLock')).toEqual(['A', 'B']);
  });
});
