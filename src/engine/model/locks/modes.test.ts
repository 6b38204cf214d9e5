/**
 * The conflict tables in modes.ts, checked against PostgreSQL's documentation: the tables
 * "Conflicting Lock Modes" (table-lock-compatibility) and "Conflicting Row-level Locks"
 * (row-lock-compatibility) of doc/src/sgml/mvcc.sgml, transcribed below cell for cell
 * (rows: requested mode; columns: current mode; X = conflict).
 */
import { describe, expect, it } from 'vitest';
import {
  conflictMask,
  conflicts,
  holdMaskOf,
  lockBit,
  lockModeNumber,
  lockModeSql,
  modeMask,
  ROW_LOCK_MODES,
  rowConflicts,
  TABLE_LOCK_MODES,
  tupleLockMode,
} from './modes';
import type { LockMode, RowLockMode, RowLockStrength } from './types';

const TABLE_LOCK_DOC = `
                         AS RS RE SUE S  SRE E  AE
ACCESS SHARE             .  .  .  .   .  .   .  X
ROW SHARE                .  .  .  .   .  .   X  X
ROW EXCLUSIVE            .  .  .  .   X  X   X  X
SHARE UPDATE EXCLUSIVE   .  .  .  X   X  X   X  X
SHARE                    .  .  X  X   .  X   X  X
SHARE ROW EXCLUSIVE      .  .  X  X   X  X   X  X
EXCLUSIVE                .  X  X  X   X  X   X  X
ACCESS EXCLUSIVE         X  X  X  X   X  X   X  X
`;

const ROW_LOCK_DOC = `
                    FKS FS FNKU FU
FOR KEY SHARE       .   .  .    X
FOR SHARE           .   .  X    X
FOR NO KEY UPDATE   .   X  X    X
FOR UPDATE          X   X  X    X
`;

/** Parses a doc grid into [row label, cells]; the row label is everything before the first cell. */
function parseGrid(text: string, width: number): { label: string; cells: boolean[] }[] {
  return text
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => {
      const tokens = line.trim().split(/\s+/);
      const cells = tokens.slice(-width);
      expect(cells.every((c) => c === 'X' || c === '.')).toBe(true);
      return { label: tokens.slice(0, -width).join(' '), cells: cells.map((c) => c === 'X') };
    });
}

describe('table-level lock conflicts (mvcc.sgml table-lock-compatibility)', () => {
  const rows = parseGrid(TABLE_LOCK_DOC, 8);

  it('rows are the eight modes in PostgreSQL’s order, spelled as LOCK TABLE spells them', () => {
    expect(rows.map((r) => r.label)).toEqual(TABLE_LOCK_MODES.map(lockModeSql));
  });

  const cells = rows.flatMap((r, i) =>
    r.cells.map((expected, j) => ({ requested: TABLE_LOCK_MODES[i], held: TABLE_LOCK_MODES[j], expected })),
  );
  it.each(cells)('$requested vs $held → $expected', ({ requested, held, expected }) => {
    expect(conflicts(requested, held)).toBe(expected);
    expect((conflictMask(requested) & lockBit(held)) !== 0).toBe(expected);
  });

  it('is symmetric', () => {
    for (const a of TABLE_LOCK_MODES) for (const b of TABLE_LOCK_MODES) expect(conflicts(a, b)).toBe(conflicts(b, a));
  });
});

describe('row-level lock conflicts (mvcc.sgml row-lock-compatibility)', () => {
  const rows = parseGrid(ROW_LOCK_DOC, 4);
  const sql: Record<RowLockStrength, string> = {
    ForKeyShare: 'FOR KEY SHARE',
    ForShare: 'FOR SHARE',
    ForNoKeyUpdate: 'FOR NO KEY UPDATE',
    ForUpdate: 'FOR UPDATE',
  };

  it('rows are the four strengths in order', () => {
    expect(rows.map((r) => r.label)).toEqual(ROW_LOCK_MODES.map((m) => sql[m]));
  });

  const cells = rows.flatMap((r, i) => r.cells.map((expected, j) => ({ requested: ROW_LOCK_MODES[i], held: ROW_LOCK_MODES[j], expected })));
  it.each(cells)('$requested vs $held → $expected', ({ requested, held, expected }) => {
    expect(rowConflicts(requested, held)).toBe(expected);
  });

  it('UPDATE (no key) behaves as FOR NO KEY UPDATE, key UPDATE / DELETE as FOR UPDATE', () => {
    const pairs: [RowLockMode, RowLockStrength][] = [
      ['NoKeyUpdate', 'ForNoKeyUpdate'],
      ['Update', 'ForUpdate'],
    ];
    for (const [implicit, strength] of pairs)
      for (const other of ROW_LOCK_MODES) expect(rowConflicts(implicit, other)).toBe(rowConflicts(strength, other));
  });
});

describe('mode helpers', () => {
  const cases: { mode: LockMode; number: number; tupleOf?: RowLockStrength }[] = [
    { mode: 'AccessShareLock', number: 1, tupleOf: 'ForKeyShare' },
    { mode: 'RowShareLock', number: 2, tupleOf: 'ForShare' },
    { mode: 'RowExclusiveLock', number: 3 },
    { mode: 'ShareUpdateExclusiveLock', number: 4 },
    { mode: 'ShareLock', number: 5 },
    { mode: 'ShareRowExclusiveLock', number: 6 },
    { mode: 'ExclusiveLock', number: 7, tupleOf: 'ForNoKeyUpdate' },
    { mode: 'AccessExclusiveLock', number: 8, tupleOf: 'ForUpdate' },
  ];
  it.each(cases)('$mode is number $number (lockdefs.h)', ({ mode, number, tupleOf }) => {
    expect(lockModeNumber(mode)).toBe(number);
    expect(lockBit(mode)).toBe(1 << number);
    if (tupleOf) expect(tupleLockMode(tupleOf)).toBe(mode); // heapam.c tupleLockExtraInfo
  });

  it('holdMaskOf ignores zero counts; modeMask unions bits', () => {
    expect(holdMaskOf({ ShareLock: 2, ExclusiveLock: 0 })).toBe(lockBit('ShareLock'));
    expect(modeMask(['ShareLock', 'AccessShareLock'])).toBe(lockBit('ShareLock') | lockBit('AccessShareLock'));
  });
});
