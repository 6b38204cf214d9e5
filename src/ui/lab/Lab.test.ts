import { describe, expect, it } from 'vitest';
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { flushSync } from 'svelte';
import Lab from './Lab.svelte';
import LabEditor from './LabEditor.svelte';
import { LabState, renameInOrder } from './lab.svelte';
import type { Explorer } from './explorer';
import { encodeScenario } from '../../scenario/share';
import { blankScenario } from '../../scenario/labScenario';
import type { InterleavingOutcome } from '../../scenario/explore';

describe('renameInOrder', () => {
  it.each([
    { args: ['a1 b1 a1(b1)', 'a1', 'x'], expected: 'x b1 x(b1)' },
    { args: ['a1 b1(a1) a10', 'a1', 'y'], expected: 'y b1(y) a10' },
    { args: ['a1 b1(*) a1', 'b1', ''], expected: 'a1 a1' },
    { args: ['a.1 b', 'a.1', 'z'], expected: 'z b' },
  ])('$args → $expected', ({ args, expected }) => {
    const [order, from, to] = args;
    expect(renameInOrder(order, from, to)).toBe(expected);
  });
});

describe('LabEditor validation', () => {
  it('shows every step SQL as text and flags an empty step next to it', async () => {
    const lab = new LabState(blankScenario());
    render(LabEditor, { props: { lab } });
    const editor = screen.getByTestId('lab-editor');
    expect(editor.textContent).toContain('BEGIN; UPDATE t SET v = v + 1 WHERE id = 1;');
    expect(screen.queryAllByTestId('lab-issue')).toHaveLength(0);
    lab.setStepSql(1, 0, '   ');
    flushSync();
    const steps = screen.getAllByTestId('lab-step');
    expect(steps[1].textContent).toContain('This step is empty');
    expect(steps[0].textContent).not.toContain('This step is empty');
  });

  it('flags an unknown step in the order with its column, and clears it once fixed', async () => {
    const lab = new LabState(blankScenario());
    render(LabEditor, { props: { lab } });
    const order = screen.getByTestId('lab-order') as HTMLInputElement;
    await fireEvent.input(order, { target: { value: 's1a s9z' } });
    const issue = screen.getByRole('alert');
    expect(issue.textContent).toContain('unknown step "s9z"');
    expect(issue.textContent).toContain('column 5');
    expect(order.getAttribute('aria-invalid')).toBe('true');
    await fireEvent.input(order, { target: { value: 's1a s2a' } });
    expect(screen.queryAllByTestId('lab-issue')).toHaveLength(0);
  });

  it('renames a step in the order, adds and removes steps and sessions', async () => {
    const lab = new LabState(blankScenario());
    render(LabEditor, { props: { lab } });
    await fireEvent.input(screen.getAllByTestId('lab-step-name')[0], { target: { value: 'lock' } });
    expect(lab.scenario.order).toBe('lock s2a');
    await fireEvent.click(screen.getAllByTestId('lab-add-step')[1]);
    expect(lab.scenario.sessions[1].steps.map((s) => s.name)).toEqual(['s2a', 's2b']);
    expect(screen.getAllByTestId('lab-step')[2].textContent).toContain('This step is empty');
    await fireEvent.click(screen.getByLabelText('Remove step s2b'));
    await fireEvent.click(screen.getByTestId('lab-add-session'));
    expect(lab.scenario.sessions.map((s) => s.name)).toEqual(['s1', 's2', 's3']);
    await fireEvent.click(screen.getByLabelText('Remove session s1'));
    await fireEvent.click(screen.getByLabelText('Remove session s2'));
    expect(screen.getByTestId('lab-editor').textContent).toContain('at least 2 sessions');
  });

  it('speaks Russian', async () => {
    const { prefs } = await import('../state/prefs.svelte');
    prefs.setLang('ru');
    try {
      const lab = new LabState({ ...blankScenario(), order: '' });
      render(LabEditor, { props: { lab } });
      expect(screen.getByTestId('lab-editor').textContent).toContain('Порядок пуст');
    } finally {
      prefs.setLang('en');
    }
  });
});

describe('Lab page', () => {
  it('opens a share link as text only, without running anything', () => {
    const hostile = { ...blankScenario(), title: '<script>window.pwned = 1</script>' };
    let created = 0;
    render(Lab, { props: { createBackend: () => (created++, null as never), query: { s: encodeScenario(hostile) } } });
    expect((screen.getByTestId('lab-title') as HTMLInputElement).value).toBe(hostile.title);
    expect(screen.getByTestId('lab').querySelectorAll('script')).toHaveLength(0);
    expect(screen.getByTestId('lab-message').textContent).toContain('Nothing has run');
    expect(created).toBe(0);
    expect((window as { pwned?: number }).pwned).toBeUndefined();
  });

  it('explains which part of a damaged link failed', () => {
    const code = encodeScenario(blankScenario());
    render(Lab, { props: { createBackend: null, query: { s: code.slice(0, 30) } } });
    const msg = screen.getByTestId('lab-message');
    expect(msg.getAttribute('role')).toBe('alert');
    expect(msg.textContent).toContain('compressed data is incomplete');
  });

  it('reports a .spec import error with its line number', async () => {
    render(Lab, { props: { createBackend: null } });
    const input = screen.getByTestId('lab-import') as HTMLInputElement;
    expect(input.type).toBe('file');
    expect(input.accept).toContain('.spec');
    const file = new File(['setup { CREATE TABLE t (id int); }\n\nsession s1\nstep a { SELECT 1; }\npermutation a b\n'], 'bad.spec');
    await fireEvent.change(input, { target: { files: [file] } });
    await waitFor(() => expect(screen.getByTestId('lab-message').textContent).toContain('line 5, column 15'));
    expect(screen.getByTestId('lab-message').textContent).toContain('unknown step "b" in permutation');
  });

  it('runs the explorer and publishes the summary counts', async () => {
    const outcome = (index: number, kind: InterleavingOutcome['kind']): InterleavingOutcome => ({
      index,
      permutation: `p${index}`,
      kind,
      victims: kind === 'deadlock' ? ['s2'] : [],
      failures: kind === 'deadlock' ? [{ step: 's2a', session: 's2', sqlstate: '40P01', message: 'deadlock detected' }] : [],
      waited: [],
      dataHash: 'h',
      data: 't(id)',
    });
    const explorer: Explorer = {
      explore: async (_text, count, onProgress) => {
        const outcomes = [outcome(0, 'clean'), outcome(1, 'deadlock')].slice(0, count);
        onProgress(outcomes);
        return { outcomes, cancelled: false };
      },
      run: async () => [],
      cancel: () => undefined,
      dispose: () => undefined,
    };
    render(Lab, { props: { createBackend: null, createExplorer: () => explorer } });
    expect(screen.getByTestId('interleavings-count').dataset.count).toBe('2');
    await fireEvent.click(screen.getByTestId('lab-explore'));
    const summary = await screen.findByTestId('interleavings-summary');
    await waitFor(() => expect(summary.dataset.state).toBe('finished'));
    expect([summary.dataset.total, summary.dataset.deadlocks, summary.dataset.errors]).toEqual(['2', '1', '0']);
    expect(summary.textContent).toContain('victim s2: 1');
  });

  it('keeps the draft a template replaces in the recent drafts, and restores it', async () => {
    localStorage.clear();
    render(Lab, { props: { createBackend: null, createChecker: null } });
    await fireEvent.input(screen.getByTestId('lab-title'), { target: { value: 'Mine' } });
    await fireEvent.change(screen.getByTestId('lab-template'), { target: { value: 'transfer-unordered' } });
    expect((screen.getByTestId('lab-title') as HTMLInputElement).value).not.toBe('Mine');
    expect(screen.getByTestId('lab-draft-kept').textContent).toContain('"Mine"');
    expect(JSON.parse(localStorage.getItem('lockstep.lab.recent')!)[0].scenario.title).toBe('Mine');
    await fireEvent.click(screen.getByTestId('lab-restore-draft'));
    expect((screen.getByTestId('lab-title') as HTMLInputElement).value).toBe('Mine');
    expect(screen.getByTestId('lab-message').textContent).toContain('Restored the draft "Mine"');
  });

  it('shows a huge interleaving count as a power of ten and marks a stopped interleaving', async () => {
    const explorer: Explorer = {
      explore: async () => {
        const outcomes: InterleavingOutcome[] = [
          {
            index: 0,
            permutation: 's1a s2a',
            kind: 'stopped',
            stoppedAfterMs: 10_000,
            victims: [],
            waited: [],
            failures: [],
            dataHash: '',
            data: '',
          },
          { index: 1, permutation: 's2a s1a', kind: 'clean', victims: [], waited: [], failures: [], dataHash: 'h', data: 't(id)' },
        ];
        return { outcomes, cancelled: false };
      },
      run: async () => [],
      cancel: () => undefined,
      dispose: () => undefined,
    };
    render(Lab, { props: { createBackend: null, createExplorer: () => explorer, createChecker: null } });
    await fireEvent.click(screen.getByTestId('lab-explore'));
    const summary = await screen.findByTestId('interleavings-summary');
    await waitFor(() => expect(summary.dataset.state).toBe('finished'));
    expect([summary.dataset.total, summary.dataset.stopped, summary.dataset.clean]).toEqual(['2', '1', '1']);
    expect(screen.getAllByTestId('interleaving')[0].textContent).toContain('stopped after 10 s');
  });
});
