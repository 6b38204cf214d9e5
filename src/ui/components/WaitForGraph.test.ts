import { describe, expect, it } from 'vitest';
import { fireEvent, render, screen } from '@testing-library/svelte';
import WaitForGraph from './WaitForGraph.svelte';
import { deadlockCycle, deadlockScenario, deadlockVictim } from '../fixtures/deadlock';
import { ssiDependencies, ssiDoomed, ssiFailed } from '../fixtures/serializable';

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
    expect(screen.getByTestId('wfg-edges-text').textContent).toContain(
      'Session A waits for session B, which holds ShareLock on transaction 746.',
    );
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
    expect(screen.getByTestId('wfg-edges-text').textContent).toContain(
      'Broken by the deadlock: B waited for A (ShareLock on transaction 745).',
    );
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

  it('draws rw-antidependencies as their own dashed edges, apart from the lock waits', () => {
    render(WaitForGraph, { props: { snapshot: ssiDependencies } });
    expect(screen.queryAllByTestId('wfg-edge')).toHaveLength(0);
    const rw = screen.getAllByTestId('wfg-rw-edge');
    expect(rw.map((e) => [e.dataset.from, e.dataset.to, e.dataset.kind])).toEqual([
      ['A', 'B', 'rw'],
      ['B', 'A', 'rw'],
    ]);
    expect(rw.every((e) => e.querySelector('text')?.textContent === 'rw')).toBe(true);
    expect(rw[0].querySelector('path')?.getAttribute('marker-end')).toContain('wfg-arrow-rw');
    expect(rw[0].querySelector('title')?.textContent).toBe(
      'Session A read data that session B changed concurrently: an rw-antidependency, so A must come before B in any serial order.',
    );
    // Nobody is doomed before A commits.
    expect(screen.queryAllByTestId('wfg-doomed-badge')).toHaveLength(0);
    expect(screen.getByTestId('wait-for-graph').getAttribute('aria-label')).toContain(
      '2 rw-antidependencies between SERIALIZABLE transactions.',
    );
    expect(screen.getByTestId('wfg-legend-rw').textContent).toContain('rw-antidependency');
  });

  it('marks the doomed session and says which end has committed', () => {
    render(WaitForGraph, { props: { snapshot: ssiDoomed } });
    const doomed = screen.getAllByTestId('wfg-node').filter((n) => n.dataset.doomed === 'true');
    expect(doomed.map((n) => n.dataset.session)).toEqual(['B']);
    expect(screen.getByTestId('wfg-doomed-badge').textContent).toBe('⚠ doomed → 40001');
    const a = screen.getAllByTestId('wfg-node').find((n) => n.dataset.session === 'A')!;
    expect(a.textContent).toContain('committed, still tracked');
    const rw = screen.getAllByTestId('wfg-rw-edge');
    expect(rw.map((e) => [e.dataset.from, e.dataset.fromCommitted, e.dataset.to, e.dataset.toCommitted])).toEqual([
      ['A', 'true', 'B', 'false'],
      ['B', 'false', 'A', 'true'],
    ]);
    const text = screen.getByTestId('wfg-edges-text').textContent!;
    expect(text).toContain('Session A (committed transaction) read data that session B changed concurrently');
    expect(text).toContain('Session B is doomed: its next statement or COMMIT fails with 40001.');
    expect(screen.getByTestId('wait-for-graph').getAttribute('aria-label')).toContain('Session B is doomed');
  });

  it('drops the rw edges and the doomed mark once SSI tracks nothing', () => {
    render(WaitForGraph, { props: { snapshot: ssiFailed } });
    expect(screen.queryAllByTestId('wfg-rw-edge')).toHaveLength(0);
    expect(screen.queryAllByTestId('wfg-doomed-badge')).toHaveLength(0);
    // The rw legend entry shows only while SERIALIZABLE transactions are tracked.
    expect(screen.queryByTestId('wfg-legend-rw')).toBeNull();
  });

  it('has a resource view with lock nodes', async () => {
    render(WaitForGraph, { props: { snapshot: deadlockCycle } });
    await fireEvent.click(screen.getByLabelText('Sessions and locks'));
    expect(screen.getByTestId('wait-for-graph').textContent).toContain('transaction 746');
  });
});
