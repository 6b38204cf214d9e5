import { describe, expect, it } from 'vitest';
import { fireEvent, render, screen } from '@testing-library/svelte';
import WaitForGraph from './WaitForGraph.svelte';
import { deadlockCycle, deadlockScenario, deadlockVictim } from '../fixtures/deadlock';

describe('WaitForGraph', () => {
  it('flags the cycle edges with their lock labels', () => {
    render(WaitForGraph, { props: { snapshot: deadlockCycle } });
    const edges = screen.getAllByTestId('wfg-edge');
    expect(edges.map((e) => [e.dataset.from, e.dataset.to, e.dataset.inCycle, e.dataset.kind])).toEqual([
      ['A', 'B', 'true', 'hard'],
      ['B', 'A', 'true', 'hard'],
    ]);
    expect(edges[0].textContent).toContain('ShareLock on transaction 746');
    expect(edges[0].querySelector('path')?.getAttribute('marker-end')).toContain('cycle');
    const svg = screen.getByTestId('wait-for-graph');
    expect(svg.getAttribute('role')).toBe('img');
    expect(svg.getAttribute('aria-label')).toContain('Deadlock cycle: A → B → A.');
    expect(screen.getByTestId('wfg-edges-text').textContent).toContain('Session A waits for session B, which holds ShareLock on transaction 746.');
  });

  it('marks the victim', () => {
    render(WaitForGraph, { props: { snapshot: deadlockVictim } });
    const victims = screen.getAllByTestId('wfg-node').filter((n) => n.dataset.victim === 'true');
    expect(victims.map((n) => n.dataset.session)).toEqual(['B']);
    expect(victims[0].textContent).toContain('victim');
    expect(screen.getByTestId('wait-for-graph').getAttribute('aria-label')).toContain('Victim: session B.');
    // The live wait edges are gone; the broken cycle is drawn as ghost edges, apart from the wfg-edge hook.
    expect(screen.queryAllByTestId('wfg-edge')).toHaveLength(0);
    expect(screen.getAllByTestId('wfg-broken-edge').map((e) => `${e.dataset.from}->${e.dataset.to}`)).toEqual(['B->A', 'A->B']);
    expect(screen.getByTestId('wfg-edges-text').textContent).toContain('Broken by the deadlock: B waited for A (ShareLock on transaction 745).');
  });

  it('shows pid, xid and state on nodes; no edges when nobody waits', () => {
    render(WaitForGraph, { props: { snapshot: deadlockScenario.frames[4] } });
    const a = screen.getAllByTestId('wfg-node').find((n) => n.dataset.session === 'A')!;
    expect(a.textContent).toContain('pid 4101');
    expect(a.textContent).toContain('xid 745');
    expect(a.textContent).toContain('idle in transaction');
    expect(screen.queryAllByTestId('wfg-edge')).toHaveLength(0);
  });

  it('keeps node positions stable between snapshots', async () => {
    const { rerender } = render(WaitForGraph, { props: { snapshot: deadlockScenario.frames[4] } });
    const pos = () => screen.getAllByTestId('wfg-node').map((n) => n.getAttribute('style'));
    const before = pos();
    await rerender({ snapshot: deadlockCycle });
    expect(pos()).toEqual(before);
  });

  it('has a resource view with lock nodes', async () => {
    render(WaitForGraph, { props: { snapshot: deadlockCycle } });
    await fireEvent.click(screen.getByLabelText('Sessions and locks'));
    expect(screen.getByTestId('wait-for-graph').textContent).toContain('transaction 746');
  });
});
