import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseLog } from './parse';
import { CAUSE_LESSON, explainReport, type StatementReading } from './explain';
import { explanationSnapshot } from './snapshot';
import { analyze, notices } from './analyze';
import { SAMPLE_DDL, SAMPLE_THREE, SAMPLE_TWO_TRANSFERS } from './samples';
import { currentDeadlock, resourceGraph, waitForGraph } from '../ui/model/graph';

const explained = (text: string) => {
  const [r] = parseLog(text).reports;
  return explainReport(r, new Map<number, StatementReading>());
};

describe('explanationSnapshot: the player graph model from a report', () => {
  it.each([
    { text: SAMPLE_TWO_TRANSFERS, nodes: ['A', 'B'], pids: [1234, 5679], xids: [5680, 5678] },
    { text: SAMPLE_THREE, nodes: ['A', 'B', 'C'], pids: [301, 302, 303], xids: [899, 900, 901] },
    { text: SAMPLE_DDL, nodes: ['A', 'B'], pids: [402, 401], xids: [null, null] },
  ])('$nodes', ({ text, nodes, pids, xids }) => {
    const ex = explained(text);
    const frozen = structuredClone(ex);
    const snap = explanationSnapshot(ex);
    expect(ex).toEqual(frozen);
    const g = waitForGraph(snap);
    expect(g.nodes.map((n) => [n.id, n.pid, n.xid, n.victim, n.inCycle])).toEqual(
      nodes.map((n, i) => [n, pids[i], xids[i], i === 0, true]),
    );
    expect(g.edges.every((e) => e.inCycle && e.kind === 'hard')).toBe(true);
    expect(g.edges.map((e) => `${e.from}->${e.to}`)).toEqual(nodes.map((n, i) => `${n}->${nodes[(i + 1) % nodes.length]}`));
    expect(currentDeadlock(snap)?.victim).toBe('A');
  });

  it('the sessions ↔ locks view shows each transaction a process waits for and who holds it', () => {
    const g = resourceGraph(explanationSnapshot(explained(SAMPLE_TWO_TRANSFERS)));
    expect(g.edges.map((e) => `${e.from}->${e.to} ${e.label}`).sort()).toEqual([
      'A->xid:5678 ShareLock',
      'B->xid:5680 ShareLock',
      'xid:5678->B ExclusiveLock',
      'xid:5680->A ExclusiveLock',
    ]);
  });

  it('labels edges as PostgreSQL words the lock, without the database', () => {
    expect(waitForGraph(explanationSnapshot(explained(SAMPLE_DDL))).edges.map((e) => e.label)).toEqual([
      'AccessExclusiveLock on relation 16385',
      'RowExclusiveLock on relation 16390',
    ]);
  });

  it('an open cycle is drawn without a victim or lit cycle', () => {
    const cut = SAMPLE_TWO_TRANSFERS.split('\n').slice(0, 2).join('\n');
    const snap = explanationSnapshot(explained(cut));
    expect(snap.deadlock).toBeNull();
    expect(snap.edges.map((e) => e.inCycle)).toEqual([false]);
  });
});

describe('analyze: notices say what was not understood', () => {
  const none = async (sqls: string[]) => sqls.map((): StatementReading => ({ ok: true, facts: null }));
  it.each([
    { text: '', expected: [{ code: 'empty' }] },
    { text: 'just words\nmore words', expected: [{ code: 'not-a-log', lines: 2 }] },
    { text: 'x: ERROR: deadlock detected (SQLSTATE 40P01)', expected: [{ code: 'client-only', line: 1 }] },
    { text: 'ORA-00060: deadlock detected while waiting for resource', expected: [{ code: 'foreign', db: 'oracle', line: 1 }] },
    {
      text: '2026-12-01 10:15:03 UTC [5] LOG:  process 5 still waiting for ShareLock on transaction 7 after 1000.000 ms',
      expected: [{ code: 'waits-only', count: 1 }],
    },
    { text: SAMPLE_TWO_TRANSFERS, expected: [] },
  ])('$expected', async ({ text, expected }) => {
    const a = await analyze(text, none, () => 't');
    expect(a.notices).toEqual(expected);
    expect(notices(a.log, a.reports, text.trim() === '')).toEqual(expected);
  });
});

describe('each cause links a lesson of the course', () => {
  it.each(Object.entries(CAUSE_LESSON))('%s → lessons/%s.yaml', (_cause, id) => {
    expect(existsSync(join(__dirname, '..', '..', 'lessons', `${id}.yaml`))).toBe(true);
  });
});
