import { describe, expect, it } from 'vitest';
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import Challenges from './Challenges.svelte';
import { bundledChallenges } from './catalog';
import type { Explorer } from '../lab/explorer';
import type { InterleavingOutcome } from '../../scenario/explore';

const outcome = (index: number, invariant: boolean): InterleavingOutcome => ({
  index,
  permutation: `a1 b1 p${index}`,
  kind: 'clean',
  victims: [],
  failures: [],
  waited: [],
  dataHash: 'h',
  data: '',
  invariant,
});

/** An explorer that answers every order with the given invariant verdicts (the order count from the call). */
function fakeExplorer(verdict: (index: number) => boolean, asked: string[] = []): Explorer {
  return {
    explore: async (text, count, onProgress, opts) => {
      asked.push(`${count}:${opts?.invariant ?? ''}:${text.includes('v = v + 1') ? 'fixed' : 'original'}`);
      const outcomes = Array.from({ length: count }, (_, i) => outcome(i, verdict(i)));
      onProgress(outcomes);
      return { outcomes, cancelled: false };
    },
    run: async () => [],
    cancel: () => undefined,
    dispose: () => undefined,
  };
}

describe('Challenges', () => {
  it('lists every bundled challenge with its URL and kind', () => {
    const { challenges, error } = bundledChallenges();
    expect(error).toBeNull();
    render(Challenges, { props: { createBackend: null } });
    const rows = screen.getAllByTestId('challenge-row');
    expect(rows.map((r) => r.getAttribute('data-challenge'))).toEqual(challenges.map((c) => c.id));
    expect(rows[0].querySelector('a')?.getAttribute('href')).toBe(`#/challenges/${challenges[0].id}`);
  });

  it('says so for an unknown id', () => {
    render(Challenges, { props: { id: 'no-such', createBackend: null } });
    expect(document.body.textContent).toContain('There is no challenge "no-such"');
  });

  it('a fix is won only when every order passes, with the invariant sent to the explorer', async () => {
    const asked: string[] = [];
    let pass = false;
    const explorer = fakeExplorer(() => pass, asked);
    render(Challenges, { props: { id: 'fix-lost-update', createBackend: null, createExplorer: () => explorer } });
    expect(screen.getByTestId('challenge-goal').textContent).toContain('counter at 12');
    await fireEvent.click(screen.getByTestId('challenge-check'));
    await waitFor(() => expect(screen.getByTestId('challenge-verdict').getAttribute('data-won')).toBe('false'));
    expect(screen.queryByTestId('challenge-won')).toBeNull();
    expect(asked[0]).toBe('20:SELECT v = 12 FROM counters WHERE id = 1:original');
    pass = true;
    await fireEvent.click(screen.getByTestId('challenge-check'));
    await waitFor(() => expect(screen.getByTestId('challenge-won')).toBeTruthy());
    expect(screen.getByTestId('challenge-solution').textContent).toContain('v = v + 1');
    expect(JSON.parse(localStorage.getItem('lockstep.challenges') ?? '{}')['fix-lost-update']).toEqual({ won: true, revealed: false });
  });
});
