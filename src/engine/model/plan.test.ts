import { describe, expect, it } from 'vitest';
import type { PlanItem } from './facts';
import { inProcessingOrder } from './plan';

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
