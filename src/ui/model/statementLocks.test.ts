import { beforeAll, describe, expect, it } from 'vitest';
import { loadModule, parseSync } from 'libpg-query';
import { LOCK_CONFLICTS, TABLE_LOCK_MODES } from '../../engine/model/locks/modes';
import type { LockMode } from '../../engine/model/locks/types';
import {
  alternatives,
  conflictLights,
  documentedLocks,
  everydayConflicts,
  firstLine,
  locksReport,
  type LockLine,
  type LocksReport,
} from './statementLocks';
import type { LocksAnswer } from '../../worker/protocol';
import { cellKey } from './matrix';

beforeAll(() => loadModule());

const tree = (sql: string): unknown => (parseSync(sql) as { stmts: { stmt: unknown }[] }).stmts[0]!.stmt;

describe('everydayConflicts', () => {
  it.each<[LockMode, string[]]>([
    ['AccessShareLock', ['alterTable']],
    ['RowShareLock', ['alterTable']],
    ['RowExclusiveLock', ['createIndex', 'createTrigger', 'alterTable']],
    ['ShareUpdateExclusiveLock', ['vacuum', 'createIndexConcurrently', 'createIndex', 'createTrigger', 'alterTable']],
    ['ShareLock', ['dml', 'vacuum', 'createIndexConcurrently', 'createTrigger', 'alterTable']],
    ['ShareRowExclusiveLock', ['dml', 'vacuum', 'createIndexConcurrently', 'createIndex', 'createTrigger', 'alterTable']],
    ['ExclusiveLock', ['forUpdate', 'dml', 'vacuum', 'createIndexConcurrently', 'createIndex', 'createTrigger', 'alterTable']],
    [
      'AccessExclusiveLock',
      ['select', 'forUpdate', 'dml', 'vacuum', 'createIndexConcurrently', 'createIndex', 'createTrigger', 'alterTable'],
    ],
  ])('%s blocks %j, and is blocked by the same', (mode, blocks) => {
    expect(everydayConflicts(mode)).toEqual({ blocks, blockedBy: blocks });
  });
});

describe('conflictLights', () => {
  it.each(TABLE_LOCK_MODES)('%s lights its own row and exactly the modes lock.c says it conflicts with', (mode) => {
    const l = conflictLights(mode);
    expect([...l.requested]).toEqual([mode]);
    expect([...l.held].sort()).toEqual([...LOCK_CONFLICTS[mode]].sort());
    expect([...l.conflicts].sort()).toEqual(LOCK_CONFLICTS[mode].map((h) => cellKey(mode, h)).sort());
  });
});

describe('documentedLocks', () => {
  it.each<[string, ReturnType<typeof documentedLocks>]>([
    [
      'CREATE INDEX CONCURRENTLY ON accounts (balance)',
      [{ relation: 'accounts', role: 'table', mode: 'ShareUpdateExclusiveLock', source: 'explicit-locking' }],
    ],
    ['CREATE INDEX ON accounts (balance)', null],
    [
      'REINDEX TABLE CONCURRENTLY accounts',
      [{ relation: 'accounts', role: 'table', mode: 'ShareUpdateExclusiveLock', source: 'explicit-locking' }],
    ],
    [
      'REINDEX (VERBOSE) INDEX CONCURRENTLY s.accounts_pkey',
      [{ relation: 's.accounts_pkey', role: 'index', mode: 'ShareUpdateExclusiveLock', source: 'explicit-locking' }],
    ],
    ['REINDEX TABLE accounts', null],
    [
      'DROP INDEX CONCURRENTLY accounts_balance_idx',
      [{ relation: 'accounts_balance_idx', role: 'index', mode: 'ShareUpdateExclusiveLock', source: 'sql-dropindex' }],
    ],
    ['VACUUM accounts', [{ relation: 'accounts', role: 'table', mode: 'ShareUpdateExclusiveLock', source: 'explicit-locking' }]],
    [
      'VACUUM (FULL, ANALYZE) accounts, transfers',
      [
        { relation: 'accounts', role: 'table', mode: 'AccessExclusiveLock', source: 'explicit-locking' },
        { relation: 'transfers', role: 'table', mode: 'AccessExclusiveLock', source: 'explicit-locking' },
      ],
    ],
    ['VACUUM FULL', [{ relation: null, role: 'each-table', mode: 'AccessExclusiveLock', source: 'explicit-locking' }]],
    ['ANALYZE accounts', null],
    ['CLUSTER', [{ relation: null, role: 'each-table', mode: 'AccessExclusiveLock', source: 'explicit-locking' }]],
    [
      'ALTER TABLE p DETACH PARTITION c CONCURRENTLY',
      [{ relation: 'p', role: 'partitioned-table', mode: 'ShareUpdateExclusiveLock', source: 'sql-altertable' }],
    ],
    ['ALTER TABLE p DETACH PARTITION c', null],
    ['CREATE DATABASE x', null],
  ])('%s', (sql, expected) => expect(documentedLocks(tree(sql))).toEqual(expected));
});

describe('alternatives', () => {
  it.each<[string, LockMode[], string[]]>([
    ['CREATE INDEX ON accounts (balance)', ['ShareLock'], ['create-index-concurrently', 'lock-timeout-retry']],
    ['CREATE INDEX CONCURRENTLY ON accounts (balance)', ['ShareUpdateExclusiveLock'], []],
    ['REINDEX TABLE accounts', ['ShareLock', 'AccessExclusiveLock'], ['reindex-concurrently', 'lock-timeout-retry']],
    ['DROP INDEX accounts_balance_idx', ['AccessExclusiveLock'], ['drop-index-concurrently', 'lock-timeout-retry']],
    ['REFRESH MATERIALIZED VIEW balances', ['AccessExclusiveLock'], ['refresh-concurrently', 'lock-timeout-retry']],
    ['REFRESH MATERIALIZED VIEW CONCURRENTLY balances', ['ExclusiveLock'], ['lock-timeout-retry']],
    ['ALTER TABLE t ADD FOREIGN KEY (a) REFERENCES accounts', ['ShareRowExclusiveLock'], ['not-valid-validate', 'lock-timeout-retry']],
    ['ALTER TABLE t ADD FOREIGN KEY (a) REFERENCES accounts NOT VALID', ['ShareRowExclusiveLock'], ['lock-timeout-retry']],
    ['ALTER TABLE t ADD CHECK (a > 0)', ['AccessExclusiveLock'], ['not-valid-validate', 'lock-timeout-retry']],
    ['ALTER TABLE t VALIDATE CONSTRAINT c', ['ShareUpdateExclusiveLock'], []],
    ['UPDATE accounts SET balance = 0', ['RowExclusiveLock'], []],
    ['SELECT 1', [], []],
  ])('%s', (sql, modes, expected) => expect(alternatives([tree(sql)], modes)).toEqual(expected));
});

describe('locksReport', () => {
  it('a measured answer keeps pg_locks order and leaves locks on created relations out of the advice', () => {
    const r = locksReport({
      kind: 'result',
      statements: [tree('CREATE INDEX CONCURRENTLY ON accounts (balance)')],
      result: {
        outcome: 'measured',
        relations: [
          { relation: 'accounts', kind: 'table', mode: 'RowExclusiveLock', created: false },
          { relation: 'i', kind: 'index', of: 'accounts', mode: 'AccessExclusiveLock', created: true },
        ],
        rows: [],
        xid: true,
        notices: [{ severity: 'NOTICE', sqlstate: '00000', message: 'm' }],
      },
    });
    expect(r).toMatchObject({ kind: 'locks', measured: true, alternatives: [], notices: ['NOTICE:  m'] });
    if (r.kind !== 'locks') throw new Error(r.kind);
    expect(r.lines.map((l) => [l.relation, l.mode, l.source, l.of])).toEqual([
      ['accounts', 'RowExclusiveLock', 'measured', undefined],
      ['i', 'AccessExclusiveLock', 'measured', 'accounts'],
    ]);
  });

  it('an answer from outside a block is documented, with the refusal and the run on its own', () => {
    const r = locksReport({
      kind: 'result',
      statements: [tree('VACUUM FULL nosuch')],
      result: {
        outcome: 'outside-block',
        refusal: { severity: 'ERROR', sqlstate: '25001', message: 'VACUUM cannot run inside a transaction block' },
        error: { severity: 'ERROR', sqlstate: '42P01', message: 'relation "nosuch" does not exist' },
        notices: [],
      },
    });
    expect(r).toMatchObject({
      kind: 'locks',
      measured: false,
      refusal: 'VACUUM cannot run inside a transaction block',
      aloneError: { sqlstate: '42P01' },
      lines: [{ relation: 'nosuch', mode: 'AccessExclusiveLock', source: 'documented', docSource: 'explicit-locking' }],
    });
  });

  it.each<[LocksAnswer, LocksReport]>([
    [{ kind: 'empty' }, { kind: 'empty' }],
    [
      { kind: 'syntax', where: 'schema', problem: { message: 'm', line: 2, column: 3 } },
      { kind: 'syntax', where: 'schema', message: 'm', line: 2, column: 3 },
    ],
    [
      {
        kind: 'result',
        statements: [],
        result: { outcome: 'failed', error: { severity: 'ERROR', sqlstate: '42P01', message: 'x', hint: 'h' } },
      },
      { kind: 'failed', sqlstate: '42P01', message: 'x', hint: 'h' },
    ],
  ])('%o', (answer, expected) => expect(locksReport(answer)).toEqual(expected));
});

describe('firstLine', () => {
  const line = (mode: LockMode, created = false): LockLine => ({ relation: 'r', mode, source: 'measured', kind: 'table', created });
  it.each<[LockLine[], number]>([
    [[line('ShareLock'), line('AccessExclusiveLock', true)], 0],
    [[line('AccessShareLock'), line('RowExclusiveLock'), line('RowExclusiveLock')], 1],
    [[line('AccessExclusiveLock', true)], 0],
    [[], 0],
  ])('%#', (lines, expected) => expect(firstLine(lines)).toBe(expected));
});
