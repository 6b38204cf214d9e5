import { describe, expect, it } from 'vitest';
import { committedTracked, doomedSessions, isSiread, rwDependencies, sireadLockRows, sireadLocktype } from './ssi';
import { ssiDependencies, ssiDoomed, ssiFailed } from '../fixtures/serializable';
import { deadlockCycle } from '../fixtures/deadlock';
import type { EngineSnapshot } from '../../engine/types';

describe('sireadLocktype', () => {
  it.each([
    { args: { page: null, tuple: null }, expected: 'relation' },
    { args: { page: 1, tuple: null }, expected: 'page' },
    { args: { page: 0, tuple: 3 }, expected: 'tuple' },
  ])('$expected', ({ args, expected }) => expect(sireadLocktype(args)).toBe(expected));
});

describe('sireadLockRows', () => {
  it('shows every tracked transaction’s SIRead locks as granted SIReadLock rows, committed ones marked', () => {
    const rows = sireadLockRows(ssiDoomed);
    expect(rows.map((r) => [r.session, r.locktype, r.relation, r.page, r.tuple, r.mode, r.granted, r.ssi.committed, r.ssi.doomed])).toEqual(
      [
        ['A', 'relation', 'doctors', null, null, 'SIReadLock', true, true, false],
        ['A', 'page', 'doctors_pkey', 1, null, 'SIReadLock', true, true, false],
        ['B', 'relation', 'doctors', null, null, 'SIReadLock', true, false, true],
        ['B', 'page', 'doctors_pkey', 1, null, 'SIReadLock', true, false, true],
      ],
    );
    // As pg_lock_status prints predicate locks: holder pid, never fast-path, no waitstart, no xid columns.
    expect(rows.every((r) => !r.fastpath && r.waitstart === null && r.transactionid === null && r.virtualxid === null)).toBe(true);
    expect(rows.map((r) => r.pid)).toEqual([6101, 6101, 6102, 6102]);
    expect(rows.every(isSiread)).toBe(true);
    // The running transaction's vxid; the committed one's is not in the snapshot.
    expect(rows.map((r) => r.virtualtransaction)).toEqual(['', '', '4/3', '4/3']);
    expect(rows[2].database).toBe(5);
  });

  it('orders by session, the committed transaction first, then relation, page, tuple', () => {
    const snap: EngineSnapshot = {
      ...ssiDoomed,
      ssi: {
        conflicts: [],
        transactions: [
          {
            session: 'B',
            state: 'active',
            doomed: false,
            sireadLocks: [
              { relation: 't', page: 0, tuple: 2 },
              { relation: 't', page: 0, tuple: 1 },
              { relation: 'r', page: null, tuple: null },
            ],
          },
          { session: 'A', state: 'active', doomed: false, sireadLocks: [{ relation: 't', page: 3, tuple: null }] },
          { session: 'A', state: 'committed', doomed: false, sireadLocks: [{ relation: 't', page: 0, tuple: 5 }] },
        ],
      },
    };
    expect(
      sireadLockRows(snap).map(
        (r) => `${r.session}${r.ssi.committed ? '*' : ''} ${r.locktype} ${r.relation} ${r.page ?? ''},${r.tuple ?? ''}`,
      ),
    ).toEqual(['A* tuple t 0,5', 'A page t 3,', 'B relation r ,', 'B tuple t 0,1', 'B tuple t 0,2']);
  });

  it.each([
    { name: 'no SSI state', snap: ssiFailed },
    { name: 'a snapshot without serializable transactions', snap: deadlockCycle },
  ])('is empty for $name', ({ snap }) => expect(sireadLockRows(snap)).toEqual([]));

  it('leaves out sessions the snapshot does not show (hidden ones)', () => {
    const snap = { ...ssiDoomed, sessions: ssiDoomed.sessions.filter((s) => s.name === 'B') };
    expect(new Set(sireadLockRows(snap).map((r) => r.session))).toEqual(new Set(['B']));
  });
});

describe('doomedSessions / committedTracked', () => {
  it.each([
    { name: 'dependencies only', snap: ssiDependencies, doomed: [], committed: [] },
    { name: 'after A commits', snap: ssiDoomed, doomed: ['B'], committed: ['A'] },
    { name: 'after the 40001', snap: ssiFailed, doomed: [], committed: [] },
  ])('$name', ({ snap, doomed, committed }) => {
    expect([...doomedSessions(snap.ssi)]).toEqual(doomed);
    expect([...committedTracked(snap.ssi)]).toEqual(committed);
  });
  it('a committed transaction is never reported as doomed', () => {
    const ssi = { conflicts: [], transactions: [{ session: 'A', state: 'committed' as const, doomed: true, sireadLocks: [] }] };
    expect(doomedSessions(ssi).size).toBe(0);
  });
});

describe('rwDependencies', () => {
  it('lists reader → writer with the committed flags and unique ids', () => {
    expect(rwDependencies(ssiDoomed)).toEqual([
      { id: 'rw:A(committed)->B', from: 'A', to: 'B', fromCommitted: true, toCommitted: false },
      { id: 'rw:B->A(committed)', from: 'B', to: 'A', fromCommitted: false, toCommitted: true },
    ]);
  });
  it('keeps ids unique for repeated pairs and drops hidden sessions', () => {
    const c = { from: 'A', to: 'B', fromCommitted: false, toCommitted: false };
    const snap = { sessions: ssiDoomed.sessions, ssi: { transactions: [], conflicts: [c, c, { ...c, to: 'clock' }] } };
    expect(rwDependencies(snap).map((d) => d.id)).toEqual(['rw:A->B', 'rw:A->B#1']);
  });
  it('is empty without SSI state', () => expect(rwDependencies(ssiFailed)).toEqual([]));
});
