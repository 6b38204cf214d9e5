import { describe, expect, it } from 'vitest';
import type { FinishedStep, SessionSnapshot } from '../../engine/types';
import { endedBy } from './endedBy';

const deadlock = { severity: 'ERROR', sqlstate: '40P01', message: 'deadlock detected' };
const step = (sql: string, error?: typeof deadlock): FinishedStep => ({
  step: sql,
  sql,
  startedMs: 0,
  endedMs: 0,
  results: [],
  notices: [],
  ...(error ? { error } : {}),
});
const session = (history: FinishedStep[]) => ({ name: 'A', history }) as unknown as SessionSnapshot;

describe('endedBy', () => {
  it.each([
    {
      what: 'a victim whose COMMIT was answered with ROLLBACK',
      history: [step('BEGIN'), step('UPDATE t', deadlock), step('COMMIT;')],
      found: 'UPDATE t',
    },
    {
      what: 'a victim that then ran ROLLBACK and END',
      history: [step('UPDATE t', deadlock), step('ROLLBACK'), step('end')],
      found: 'UPDATE t',
    },
    { what: 'the error is the last statement (the pane shows it)', history: [step('BEGIN'), step('UPDATE t', deadlock)], found: null },
    { what: 'a new statement ran after the error', history: [step('UPDATE t', deadlock), step('ROLLBACK'), step('SELECT 1')], found: null },
    { what: 'no error', history: [step('BEGIN'), step('COMMIT')], found: null },
    { what: 'no history', history: [], found: null },
  ])('$what', ({ history, found }) => expect(endedBy(session(history))?.sql ?? null).toBe(found));
});
