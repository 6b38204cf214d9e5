import { describe, expect, it } from 'vitest';
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import LocksPage from './LocksPage.svelte';
import type { LocksEngine } from './engine';
import type { LocksOutcome } from '../../worker/client';
import { SAMPLE_SCHEMA } from '../model/statementLocks';

/** An engine that records what it was asked and answers with `out`. */
function fake(out: LocksOutcome): LocksEngine & { asked: [string, string][] } {
  const asked: [string, string][] = [];
  return { asked, locks: async (schema, sql) => (asked.push([schema, sql]), out), dispose: () => undefined };
}

const alter: LocksOutcome = {
  kind: 'answer',
  answer: {
    kind: 'result',
    statements: [{ AlterTableStmt: { cmds: [] } }],
    result: {
      outcome: 'measured',
      relations: [{ relation: 'accounts', kind: 'table', mode: 'AccessExclusiveLock', created: false }],
      rows: [],
      xid: true,
      notices: [],
    },
  },
};

describe('LocksPage', () => {
  it('sends the statement and the sample schema, and shows one row per lock with the matrix row lit', async () => {
    const engine = fake(alter);
    render(LocksPage, { props: { engine } });
    await fireEvent.input(screen.getByTestId('locks-input'), { target: { value: 'ALTER TABLE accounts ADD COLUMN note text' } });
    await fireEvent.click(screen.getByTestId('locks-run'));
    await waitFor(() => expect(screen.getByTestId('locks-result')).toBeTruthy());
    expect(engine.asked).toEqual([[SAMPLE_SCHEMA, 'ALTER TABLE accounts ADD COLUMN note text']]);
    const rows = screen.getAllByTestId('locks-row');
    expect(rows.map((r) => [r.dataset.relation, r.dataset.mode, r.dataset.source])).toEqual([
      ['accounts', 'AccessExclusiveLock', 'measured'],
    ]);
    expect(screen.getByTestId('locks-result').dataset.source).toBe('measured');
    const lit = [...screen.getByTestId('locks-matrix').querySelectorAll('tbody tr.lit th')].map((th) => th.textContent?.trim());
    expect(lit).toEqual(['ACCESS EXCLUSIVE']);
    expect(screen.queryByTestId('locks-error')).toBeNull();
  });

  it.each<[LocksOutcome, string]>([
    [
      {
        kind: 'answer',
        answer: { kind: 'syntax', where: 'statement', problem: { message: 'syntax error at end of input', line: 1, column: 25 } },
      },
      'The statement does not parse (line 1, column 25): syntax error at end of input',
    ],
    [{ kind: 'stopped', limitMs: 4000, afterMs: 14_200, byLearner: false }, 'did not finish within 4 s and was stopped after 14.2 s'],
    [{ kind: 'answer', answer: { kind: 'transaction-control' } }, 'Leave out BEGIN, COMMIT'],
  ])('bad input or a runaway: %#', async (out, text) => {
    render(LocksPage, { props: { engine: fake(out) } });
    await fireEvent.click(screen.getByTestId('locks-run'));
    await waitFor(() => expect(screen.getByTestId('locks-error').textContent).toContain(text));
    expect(screen.queryByTestId('locks-result')).toBeNull();
    expect((screen.getByTestId('locks-run') as HTMLButtonElement).disabled).toBe(false);
  });
});
