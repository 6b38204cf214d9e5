import { describe, expect, it } from 'vitest';
import type { PgMessage } from '../../scenario/types';
import { formatMs, pgMessageLines, pgMessageText } from './format';

describe('formatMs', () => {
  it.each([
    { args: 0, expected: '0 ms' },
    { args: 750, expected: '750 ms' },
    { args: 1000, expected: '1 s' },
    { args: 1250, expected: '1.25 s' },
    { args: 125_000, expected: '2 min 5 s' },
    { args: 120_000, expected: '2 min' },
    { args: -5, expected: '0 ms' },
  ])('$args → $expected', ({ args, expected }) => expect(formatMs(args)).toBe(expected));
});

describe('pgMessageLines', () => {
  const deadlock: PgMessage = Object.freeze({
    severity: 'ERROR',
    sqlstate: '40P01',
    message: 'deadlock detected',
    detail:
      'Process 2 waits for ShareLock on transaction 745; blocked by process 1.\nProcess 1 waits for ShareLock on transaction 746; blocked by process 2.',
    hint: 'See server log for query details.',
    context: 'while updating tuple (0,1) in relation "accounts"',
  });
  it.each([
    {
      name: 'full deadlock error',
      args: deadlock,
      expected:
        'ERROR:  deadlock detected\n' +
        'DETAIL:  Process 2 waits for ShareLock on transaction 745; blocked by process 1.\n' +
        'Process 1 waits for ShareLock on transaction 746; blocked by process 2.\n' +
        'HINT:  See server log for query details.\n' +
        'CONTEXT:  while updating tuple (0,1) in relation "accounts"\n' +
        'SQLSTATE:  40P01',
    },
    {
      name: 'message only',
      args: { severity: 'ERROR', sqlstate: '55P03', message: 'could not obtain lock on row in relation "t"' },
      expected: 'ERROR:  could not obtain lock on row in relation "t"\nSQLSTATE:  55P03',
    },
    {
      name: 'notice without severity falls back to ERROR label only when empty',
      args: { severity: 'NOTICE', sqlstate: '00000', message: 'hello' },
      expected: 'NOTICE:  hello\nSQLSTATE:  00000',
    },
  ])('$name', ({ args, expected }) => {
    const before = JSON.stringify(args);
    expect(pgMessageText(args)).toBe(expected);
    expect(JSON.stringify(args)).toBe(before);
  });
  it('labels continuation lines with an empty label', () => {
    expect(pgMessageLines(deadlock)[2]).toEqual({
      label: '',
      text: 'Process 1 waits for ShareLock on transaction 746; blocked by process 2.',
    });
  });
});

describe('formatMs with Russian units', () => {
  const ru = { ms: 'мс', s: 'с', min: 'мин', decimal: ',' };
  it('uses the given unit words and decimal separator', () => {
    expect(formatMs(100, ru)).toBe('100 мс');
    expect(formatMs(2000, ru)).toBe('2 с');
    expect(formatMs(1250, ru)).toBe('1,25 с');
    expect(formatMs(125_500, ru)).toBe('2 мин 5,5 с');
  });
});
