import { describe, expect, it } from 'vitest';
import type { PlanItem } from './facts';
import { buildPlan, inCallOrder, inProcessingOrder } from './plan';
import { newModelState } from '../state';
import type { ParsedStatement } from '../sql';

const row = (relation: string, offset: number): PlanItem => ({
  kind: 'row',
  tuple: { oid: relation === 'kv' ? 1 : 2, relation, block: 0, offset },
  mode: 'NoKeyUpdate',
});
const key = (table: string, k: number, ctid: string): PlanItem => ({ kind: 'key', index: `${table}_pkey`, key: `(k)=(${k})`, table, ctid });
const names = (plan: PlanItem[]) =>
  plan.map((p) => (p.kind === 'row' ? `row ${p.tuple.relation} ${p.tuple.offset}` : p.kind === 'key' ? `key ${p.table} ${p.key}` : p.kind));

describe('inProcessingOrder: an upsert takes its rows in the order it created their versions', () => {
  it('orders DO UPDATE row locks and inserted keys by the ctid of the version each row made', () => {
    // VALUES (3), (2), (1): key 3 inserted at (0,4), row 2 updated to (0,5), row 1 to (0,6).
    const plan = [
      { kind: 'rel', tag: { type: 'relation', relation: 'kv', oid: 1 }, mode: 'RowExclusiveLock', name: 'kv' } as PlanItem,
      row('kv', 1),
      row('kv', 2),
      key('kv', 3, '(0,4)'),
      key('kv', 2, '(0,5)'),
      key('kv', 1, '(0,6)'),
    ];
    const created = new Map([
      ['1:(0,1)', '(0,6)'],
      ['1:(0,2)', '(0,5)'],
    ]);
    expect(names(inProcessingOrder(plan, created))).toEqual([
      'rel',
      'key kv (k)=(3)',
      'row kv 2',
      'key kv (k)=(2)',
      'row kv 1',
      'key kv (k)=(1)',
    ]);
  });

  it('keeps a lock without a new version, and other tables, in their places', () => {
    // Row 1 locked by a DO UPDATE whose WHERE failed; another table's key (a trigger's insert).
    const plan = [row('kv', 1), row('kv', 2), key('kv', 2, '(0,9)'), key('log', 7, '(0,1)'), key('kv', 5, '(0,8)')];
    const created = new Map([['1:(0,2)', '(0,9)']]);
    expect(names(inProcessingOrder(plan, created))).toEqual([
      'row kv 1',
      'key kv (k)=(5)',
      'row kv 2',
      'key log (k)=(7)',
      'key kv (k)=(2)',
    ]);
  });
});

describe('buildPlan: DROP INDEX locks the index right after its table', () => {
  const rel = (oid: number, name: string, table: string, isIndex = false) => ({
    oid,
    name,
    mode: 'AccessExclusiveLock' as const,
    isIndex,
    table,
  });
  const sample = (relations: ReturnType<typeof rel>[]) => ({ relations, advisory: [], xids: new Set<number>(), predicate: [] });
  const st = (droppedIndexes?: string[]) =>
    ({
      sql: '',
      cls: {
        kind: 'dml',
        waitPolicy: 'block',
        lockNowait: false,
        relations: [],
        verb: 'other',
        mentionsAdvisory: false,
        mentionsDiagnostics: false,
        lockingSelect: false,
        ...(droppedIndexes ? { droppedIndexes } : {}),
      },
    }) as ParsedStatement;
  const after = sample([
    rel(10, 'events', 'events'),
    rel(11, 'events_a', 'events_a'),
    rel(12, 'events_b', 'events_b'),
    rel(20, 'events_id_idx', 'events', true),
    rel(21, 'events_a_id_idx', 'events_a', true),
  ]);
  const order = (s: ParsedStatement) =>
    buildPlan(newModelState(), s, sample([]), after, []).map((p) => (p.kind === 'rel' ? p.name : p.kind));
  it.each([
    {
      name: 'the named index follows its table, before the partitions',
      droppedIndexes: ['events_id_idx'],
      expected: ['events', 'events_id_idx', 'events_a', 'events_b', 'events_a_id_idx'],
    },
    {
      name: 'any other statement locks indexes after every table',
      droppedIndexes: undefined,
      expected: ['events', 'events_a', 'events_b', 'events_id_idx', 'events_a_id_idx'],
    },
  ])('$name', ({ droppedIndexes, expected }) => {
    expect(order(st(droppedIndexes))).toEqual(expected);
  });
});

describe('inCallOrder: advisory locks among row locks, in execution order', () => {
  const adv = (key2: number, call?: number): PlanItem => ({
    kind: 'adv',
    tag: { type: 'advisory', key1: 0, key2, field4: 1 },
    mode: 'ExclusiveLock',
    sessionLevel: false,
    ...(call !== undefined ? { call } : {}),
  });
  const ranked = (offset: number, lockedBefore?: number): PlanItem => ({
    ...row('kv', offset),
    ...(lockedBefore !== undefined ? { lockedBefore } : {}),
  });
  const show = (plan: PlanItem[]) => plan.map((p) => (p.kind === 'adv' ? `adv ${p.tag.key2}` : names([p])[0]));
  const rel = { kind: 'rel', tag: { type: 'relation', relation: 'kv', oid: 1 }, mode: 'RowExclusiveLock', name: 'kv' } as PlanItem;

  it('waits for an advisory lock holding the rows a function locked before it asked', () => {
    // UPDATE row 1; pg_advisory_xact_lock(42); UPDATE row 2.
    expect(show(inCallOrder([rel, adv(42, 0), ranked(1, 0), ranked(2)]))).toEqual(['rel', 'row kv 1', 'adv 42', 'row kv 2']);
  });

  it('takes a WHERE clause lock before each row, and keeps a row with the index entries after it', () => {
    const plan = [rel, adv(1, 0), adv(2, 1), ranked(1, 1), key('kv', 1, '(0,4)'), ranked(2, 2), key('kv', 2, '(0,5)')];
    expect(show(inCallOrder(plan))).toEqual(['rel', 'adv 1', 'row kv 1', 'key kv (k)=(1)', 'adv 2', 'row kv 2', 'key kv (k)=(2)']);
  });

  it('puts a lock asked for after every row last, and leaves locks without a note first', () => {
    expect(show(inCallOrder([rel, adv(7), adv(8, 0), ranked(1, 0)]))).toEqual(['rel', 'adv 7', 'row kv 1', 'adv 8']);
  });
});
