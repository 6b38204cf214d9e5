import { describe, expect, it } from 'vitest';
import {
  badgeAnchor,
  brokenCycleEdges,
  currentDeadlock,
  cyclePath,
  deadlockRequests,
  edgeGeometry,
  layoutNodes,
  placeLabels,
  resourceGraph,
  rwEdges,
  waitForGraph,
  type Point,
} from './graph';
import { deadlockCycle, deadlockScenario, deadlockVictim } from '../fixtures/deadlock';
import { ssiDependencies, ssiDoomed, ssiFailed } from '../fixtures/serializable';

const OPTS = { width: 400, height: 300, radius: 30 };

describe('waitForGraph', () => {
  it('flags cycle edges and nodes from the snapshot', () => {
    const g = waitForGraph(deadlockCycle);
    expect(g.edges.map((e) => [e.from, e.to, e.inCycle, e.label])).toEqual([
      ['A', 'B', true, 'ShareLock on transaction 746'],
      ['B', 'A', true, 'ShareLock on transaction 745'],
    ]);
    expect(g.nodes.map((n) => [n.id, n.inCycle, n.victim, n.state])).toEqual([
      ['A', true, false, 'waiting'],
      ['B', true, false, 'waiting'],
    ]);
  });
  it('marks the victim', () => {
    expect(
      waitForGraph(deadlockVictim)
        .nodes.filter((n) => n.victim)
        .map((n) => n.id),
    ).toEqual(['B']);
  });
  it('resource view links sessions to the contested transaction ids', () => {
    const g = resourceGraph(deadlockCycle);
    expect(
      g.nodes
        .filter((n) => n.kind === 'lock')
        .map((n) => n.label)
        .sort(),
    ).toEqual(['transaction 745', 'transaction 746']);
    expect(g.edges.find((e) => e.from === 'A' && e.to === 'xid:746')?.label).toBe('ShareLock');
    expect(g.edges.find((e) => e.from === 'xid:746' && e.to === 'B')?.kind).toBe('holds');
  });
});

describe('SERIALIZABLE in the graph', () => {
  it('rw-antidependencies are their own edges, reader → writer, labelled rw; the wait edges stay lock waits', () => {
    expect(rwEdges(ssiDoomed)).toEqual([
      { id: 'rw:A(committed)->B', from: 'A', to: 'B', kind: 'rw', label: 'rw', inCycle: false, committed: { from: true, to: false } },
      { id: 'rw:B->A(committed)', from: 'B', to: 'A', kind: 'rw', label: 'rw', inCycle: false, committed: { from: false, to: true } },
    ]);
    expect(waitForGraph(ssiDoomed).edges).toEqual([]);
    expect(rwEdges(ssiFailed)).toEqual([]);
    expect(rwEdges(deadlockCycle)).toEqual([]);
  });
  it.each([
    { name: 'before A commits nobody is doomed', snap: ssiDependencies, doomed: [], committed: [] },
    { name: 'after A commits B is doomed and A’s transaction is still tracked', snap: ssiDoomed, doomed: ['B'], committed: ['A'] },
  ])('$name', ({ snap, doomed, committed }) => {
    const nodes = waitForGraph(snap).nodes;
    expect(nodes.filter((n) => n.doomed).map((n) => n.id)).toEqual(doomed);
    expect(nodes.filter((n) => n.ssiCommitted).map((n) => n.id)).toEqual(committed);
  });
  it.each([
    { x: 80, expected: { anchor: 'start', x: -30 } },
    { x: 200, expected: { anchor: 'middle', x: 0 } },
    { x: 320, expected: { anchor: 'end', x: 30 } },
  ])('badgeAnchor at x = $x', ({ x, expected }) => expect(badgeAnchor(x, 400, 30)).toEqual(expected));
  it('the deadlock fixtures have no SSI marks', () => {
    expect(waitForGraph(deadlockCycle).nodes.some((n) => n.doomed || n.ssiCommitted)).toBe(false);
  });
});

describe('layoutNodes', () => {
  it('is deterministic and stays inside the box', () => {
    const links = [{ from: 'A', to: 'B' }];
    const a = layoutNodes(['A', 'B', 'C'], links, new Map(), OPTS);
    const b = layoutNodes(['A', 'B', 'C'], links, new Map(), OPTS);
    expect([...a]).toEqual([...b]);
    for (const p of a.values()) {
      expect(p.x).toBeGreaterThanOrEqual(30);
      expect(p.x).toBeLessThanOrEqual(370);
      expect(p.y).toBeGreaterThanOrEqual(30);
      expect(p.y).toBeLessThanOrEqual(270);
    }
  });
  it('spreads nodes apart', () => {
    const p = layoutNodes(['A', 'B'], [], new Map(), OPTS);
    const [a, b] = [p.get('A')!, p.get('B')!];
    expect(Math.hypot(a.x - b.x, a.y - b.y)).toBeGreaterThan(60);
  });
  it.each([
    { name: 'known nodes keep their position when a node appears', ids: ['A', 'B', 'C'] },
    { name: 'known nodes keep their position when nothing changes', ids: ['A', 'B'] },
    { name: 'known nodes keep their position when a node goes away', ids: ['A'] },
  ])('$name', ({ ids }) => {
    const previous: ReadonlyMap<string, Point> = Object.freeze(
      new Map([
        ['A', { x: 100, y: 120 }],
        ['B', { x: 300, y: 150 }],
      ]),
    );
    const snapshot = JSON.stringify([...previous]);
    const idsCopy = ids.slice();
    const out = layoutNodes(ids, [{ from: 'C', to: 'A' }], previous, OPTS);
    for (const id of ids) if (previous.has(id)) expect(out.get(id)).toEqual(previous.get(id));
    expect(JSON.stringify([...previous])).toBe(snapshot);
    expect(ids).toEqual(idsCopy);
    expect([...out.keys()]).toEqual(ids);
  });
});

describe('edgeGeometry', () => {
  const pos = new Map<string, Point>([
    ['A', { x: 0, y: 0 }],
    ['B', { x: 100, y: 0 }],
  ]);
  it.each([
    {
      name: 'a single edge is straight and trimmed to the circles (+ arrow gap)',
      edges: [{ id: 'e', from: 'A', to: 'B' }],
      expected: [{ id: 'e', d: 'M10,0L84,0', label: { x: 48.5, y: 0 } }],
    },
    {
      name: 'A→B and B→A bend to opposite sides',
      edges: [
        { id: 'ab', from: 'A', to: 'B' },
        { id: 'ba', from: 'B', to: 'A' },
      ],
      check: (g: ReturnType<typeof edgeGeometry>) => {
        expect(g).toHaveLength(2);
        expect(Math.sign(g[0].label.y)).toBe(-Math.sign(g[1].label.y));
        expect(g[0].d).toMatch(/^M.*Q/);
      },
    },
    { name: 'edges to unknown nodes are skipped', edges: [{ id: 'x', from: 'A', to: 'Z' }], expected: [] },
    { name: 'self loops are skipped', edges: [{ id: 'x', from: 'A', to: 'A' }], expected: [] },
  ])('$name', ({ edges, expected, check }) => {
    const before = JSON.stringify(edges);
    const g = edgeGeometry(edges, pos, 10, { arrowGap: 6 });
    if (expected) expect(g.map(({ id, d, label }) => ({ id, d, label }))).toEqual(expected);
    check?.(g);
    expect(JSON.stringify(edges)).toBe(before);
  });
  it('two edges in the same direction do not overlap', () => {
    const g = edgeGeometry(
      [
        { id: '1', from: 'A', to: 'B' },
        { id: '2', from: 'A', to: 'B' },
      ],
      pos,
      10,
    );
    expect(g[0].d).not.toBe(g[1].d);
  });
});

describe('placeLabels', () => {
  const geom = (id: string, label: Point, alt: Point[]) => ({ id, d: '', label, alt });
  const box = { width: 400, height: 300 };
  const node = { radius: 20, below: 10 };
  it.each([
    {
      name: 'a label clear of every node keeps its place',
      nodes: [['A', { x: 50, y: 50 }]],
      edges: [geom('e', { x: 200, y: 200 }, [{ x: 300, y: 200 }])],
      expected: { e: { x: 200, y: 200 } },
    },
    {
      name: 'a label on a node moves to the first free alternative',
      nodes: [['O', { x: 200, y: 200 }]],
      edges: [
        geom('e', { x: 200, y: 205 }, [
          { x: 205, y: 215 },
          { x: 320, y: 100 },
          { x: 100, y: 100 },
        ]),
      ],
      expected: { e: { x: 320, y: 100 } },
    },
    {
      name: 'the state line under a node counts as the node',
      nodes: [['O', { x: 200, y: 100 }]],
      edges: [geom('e', { x: 200, y: 128 }, [{ x: 200, y: 180 }])],
      expected: { e: { x: 200, y: 180 } },
    },
    {
      name: 'a second label does not sit on the first',
      nodes: [],
      edges: [geom('a', { x: 100, y: 100 }, []), geom('b', { x: 110, y: 102 }, [{ x: 110, y: 140 }])],
      expected: { a: { x: 100, y: 100 }, b: { x: 110, y: 140 } },
    },
    {
      name: 'a place that leaves the box is not taken when one inside is free',
      nodes: [],
      edges: [geom('e', { x: 395, y: 100 }, [{ x: 300, y: 100 }])],
      expected: { e: { x: 300, y: 100 } },
    },
    {
      name: 'with no free place the least covered one wins',
      nodes: [['O', { x: 200, y: 200 }]],
      edges: [geom('e', { x: 200, y: 200 }, [{ x: 225, y: 200 }])],
      expected: { e: { x: 225, y: 200 } },
    },
  ])('$name', ({ nodes, edges, expected }) => {
    const sizes = new Map(edges.map((e) => [e.id, { w: 40, h: 12 }]));
    const got = placeLabels(edges, sizes, new Map(nodes as [string, Point][]), node, box);
    expect(Object.fromEntries(got)).toEqual(expected);
  });
});

describe('cyclePath', () => {
  it.each([
    { args: ['A', 'B'], expected: 'A → B → A' },
    { args: [], expected: '' },
  ])('$args', ({ args, expected }) => expect(cyclePath(args)).toBe(expected));
});

describe('currentDeadlock', () => {
  it('is the deadlock while the victim’s 40P01 is its latest statement, and null once it ran another', () => {
    expect(currentDeadlock(deadlockVictim)?.victim).toBe('B');
    const later = deadlockScenario.frames[10];
    expect(later.deadlock?.victim).toBe('B');
    expect(currentDeadlock(later)).toBeNull();
    expect(waitForGraph(later).nodes.some((n) => n.victim)).toBe(false);
    expect(brokenCycleEdges(later)).toEqual([]);
  });
});

describe('deadlockRequests', () => {
  it('reads each member’s request from the victim’s DETAIL, by pid', () => {
    expect([...deadlockRequests(deadlockVictim)]).toEqual([
      ['B', 'ShareLock on transaction 745'],
      ['A', 'ShareLock on transaction 746'],
    ]);
  });
  it('labels a broken edge even when its session never logged a wait (an early deadlock)', () => {
    const noWaits = { ...deadlockVictim, events: deadlockVictim.events.filter((e) => e.type !== 'wait') };
    expect(brokenCycleEdges(noWaits).map((e) => [e.from, e.label])).toEqual([
      ['B', 'ShareLock on transaction 745'],
      ['A', 'ShareLock on transaction 746'],
    ]);
  });
});
