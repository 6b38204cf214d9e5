import { describe, expect, it } from 'vitest';
import { timeScale, timelineModel } from './timeline';
import { deadlockCycle, deadlockScenario } from '../fixtures/deadlock';

describe('timelineModel', () => {
  it('keeps open waits open until now', () => {
    const m = timelineModel(deadlockCycle);
    expect(m.lanes).toEqual(['A', 'B']);
    expect(m.bars.map((b) => [b.session, b.fromMs, b.toMs, b.open])).toEqual([
      ['A', 500, 2100, true],
      ['B', 2100, 2100, true],
    ]);
  });
  it('closes waits on grant / deadlock and marks the events', () => {
    const m = timelineModel(deadlockScenario.frames[10]);
    expect(m.bars.map((b) => [b.session, b.fromMs, b.toMs, b.open])).toEqual([
      ['B', 2100, 3100, false],
      ['A', 500, 3100, false],
    ]);
    expect(m.marks.map((k) => [k.session, k.kind, k.atMs])).toEqual([
      ['B', 'deadlock', 3100],
      ['B', 'failed', 3100],
      ['A', 'grant', 3100],
      ['A', 'commit', 3200],
      ['B', 'rollback', 3300],
    ]);
    expect(m.endMs).toBe(3300);
  });
  it('scale never has an empty domain', () => {
    expect(timeScale(0, 0, 100)(1000)).toBe(100);
  });
});
