import { describe, expect, it } from 'vitest';
import { placeMarks, timeScale, timelineModel, type TimelineMark } from './timeline';
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

describe('placeMarks', () => {
  const x = (ms: number) => ms / 10;
  const mark = (session: string, atMs: number, kind: TimelineMark['kind']): TimelineMark => ({
    session,
    atMs,
    kind,
    event: { type: 'commit', atMs, session },
  });
  it('spreads marks of one lane at the same moment side by side, in event order, keeping their true x', () => {
    const placed = placeMarks([mark('B', 3000, 'deadlock'), mark('B', 3000, 'failed'), mark('A', 3000, 'grant')], x, 20);
    expect(placed.map((m) => [m.session, m.kind, m.x, m.cx])).toEqual([
      ['B', 'deadlock', 300, 300],
      ['B', 'failed', 300, 320],
      ['A', 'grant', 300, 300],
    ]);
  });
  it('leaves marks far enough apart where they are', () => {
    expect(placeMarks([mark('A', 0, 'commit'), mark('A', 1000, 'commit')], x, 20).map((m) => m.cx)).toEqual([0, 100]);
  });
});
