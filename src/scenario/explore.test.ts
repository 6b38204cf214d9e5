import { afterAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSpec } from './spec';
import { countAllPermutations, iterateAllPermutations } from './permutations';
import { classify, dataText, exploreBatch, fnv1a, summarize, type FinalTable, type InterleavingOutcome } from './explore';
import { SimDriver } from '../sim/simDriver';
import type { Spec } from './types';

const root = join(__dirname, '..', '..');
const template = (name: string): Spec => {
  const spec = parseSpec(readFileSync(join(root, 'lessons', 'lab-templates', `${name}.spec`), 'utf8'));
  return { ...spec, permutations: [] };
};

/** Brute force: all orderings of the multiset of session indexes, deduplicated. */
function bruteForceCount(piles: number[]): number {
  const seen = new Set<string>();
  const walk = (left: number[], acc: number[]) => {
    if (left.every((n) => n === 0)) return void seen.add(acc.join(','));
    left.forEach((n, i) => {
      if (n === 0) return;
      const next = [...left];
      next[i]--;
      walk(next, [...acc, i]);
    });
  };
  walk(piles, []);
  return seen.size;
}

describe('interleaving enumerator (isolationtester rules)', () => {
  it.each([[[1, 1]], [[2, 2]], [[3, 3]], [[1, 2, 3]], [[2, 2, 2]], [[4, 1]], [[1, 1, 1, 1]]])(
    'piles %j: count = brute force = generated, all distinct, session order kept',
    (piles) => {
      const spec: Spec = {
        setup: [],
        sessions: piles.map((n, i) => ({ name: `s${i}`, steps: Array.from({ length: n }, (_, k) => ({ name: `s${i}_${k}`, sql: '' })) })),
        permutations: [],
      };
      const all = [...iterateAllPermutations(spec)].map((p) => p.steps.map((s) => s.step).join(' '));
      expect(Number(countAllPermutations(spec))).toBe(bruteForceCount(piles));
      expect(all.length).toBe(bruteForceCount(piles));
      expect(new Set(all).size).toBe(all.length);
      for (const p of all)
        for (let i = 0; i < piles.length; i++) {
          const mine = p.split(' ').filter((s) => s.startsWith(`s${i}_`));
          expect(mine).toEqual([...mine].sort());
        }
    },
  );

  const conformance = readdirSync(join(root, 'tests', 'conformance')).filter((f) => f.endsWith('.spec'));
  it.each(conformance)('%s: the multinomial count matches the generator when small', (file) => {
    const spec = parseSpec(readFileSync(join(root, 'tests', 'conformance', file), 'utf8'));
    const count = countAllPermutations(spec);
    if (count > 20_000n) return;
    let n = 0;
    for (const _ of iterateAllPermutations(spec)) n++;
    expect(BigInt(n)).toBe(count);
  });
});

describe('classify and summarize', () => {
  const tables: FinalTable[] = [
    {
      name: 't',
      columns: ['id', 'v'],
      rows: [
        ['2', 'b'],
        ['1', null],
      ],
    },
  ];
  it('hashes data independently of row order', () => {
    const swapped: FinalTable[] = [{ ...tables[0], rows: [...tables[0].rows].reverse() }];
    expect(dataText(tables)).toBe('t(id, v)\n  1 | NULL\n  2 | b');
    expect(fnv1a(dataText(swapped))).toBe(fnv1a(dataText(tables)));
    expect(fnv1a('')).toBe('811c9dc5');
  });

  const outcome = (
    index: number,
    kind: InterleavingOutcome['kind'],
    failures: InterleavingOutcome['failures'] = [],
    hash = 'h1',
  ): InterleavingOutcome => ({
    index,
    permutation: `p${index}`,
    kind,
    victims: failures.filter((f) => f.sqlstate === '40P01').map((f) => f.session),
    failures,
    waited: [],
    dataHash: hash,
    data: hash,
  });
  it('counts each kind, victims, SQLSTATEs (stalled and stopped runs aside) and final states', () => {
    const dl = (s: string) => ({ step: 'x', session: s, sqlstate: '40P01', message: 'deadlock detected' });
    const outcomes = [
      outcome(0, 'clean'),
      outcome(1, 'deadlock', [dl('A')], 'h2'),
      outcome(2, 'deadlock', [dl('B')], 'h2'),
      outcome(3, 'error', [{ step: 'y', session: 'A', sqlstate: '55P03', message: 'could not obtain lock' }]),
      outcome(4, 'stalled', [{ step: 'z', session: 'B', sqlstate: '57014', message: 'canceling statement due to user request' }], 'h3'),
      { ...outcome(5, 'stopped', [], ''), stoppedAfterMs: 10_000 },
    ];
    const frozen = structuredClone(outcomes);
    expect(summarize(outcomes)).toEqual({
      total: 6,
      clean: 1,
      deadlocks: 2,
      errors: 1,
      stalled: 1,
      stopped: 1,
      victims: [
        { session: 'A', count: 1 },
        { session: 'B', count: 1 },
      ],
      sqlstates: [{ sqlstate: '55P03', count: 1, message: 'could not obtain lock' }],
      finalStates: [
        { hash: 'h1', count: 2, data: 'h1', firstIndex: 0 },
        { hash: 'h2', count: 2, data: 'h2', firstIndex: 1 },
      ],
    });
    expect(outcomes).toEqual(frozen);
  });

  it('marks an isolationtester failure as an error', () => {
    const o = classify(3, { permutation: 'a b', failure: 'failed to complete permutation due to mutually-blocking steps' }, []);
    expect(o.kind).toBe('error');
    expect(o.failures[0].sqlstate).toBe('isolation');
  });
});

describe('exploring the course transfers on the simulator', () => {
  const driver = new SimDriver();
  afterAll(() => driver.close());
  const probe = async () => {
    await driver.engine!.refreshTables();
    return driver.engine!.snapshot().tables.map((t) => ({ name: t.name, columns: t.columns, rows: t.rows.map((r) => r.values) }));
  };

  it('the unordered transfer deadlocks in some interleavings, with both sessions as victims', async () => {
    const spec = template('transfer-unordered');
    const batch = await exploreBatch(spec, driver, probe, 0, 100);
    const s = summarize(batch.outcomes);
    expect(batch.total).toBe(20);
    expect({ total: s.total, clean: s.clean, deadlocks: s.deadlocks, errors: s.errors, stalled: s.stalled }).toEqual({
      total: 20,
      clean: 4,
      deadlocks: 8,
      errors: 0,
      stalled: 8,
    });
    expect(s.victims).toEqual([
      { session: 'A', count: 4 },
      { session: 'B', count: 4 },
    ]);
    expect(s.finalStates.map((f) => f.count)).toEqual([4, 4, 4]);
  }, 120_000);

  it('the ORDER BY id FOR UPDATE version deadlocks in none and always ends with both transfers applied', async () => {
    const batch = await exploreBatch(template('transfer-ordered'), driver, probe, 0, 100);
    const s = summarize(batch.outcomes);
    expect({ total: s.total, deadlocks: s.deadlocks, errors: s.errors }).toEqual({ total: 20, deadlocks: 0, errors: 0 });
    expect(s.finalStates).toHaveLength(1);
  }, 120_000);

  it('runs a range and can return full runs', async () => {
    const batch = await exploreBatch(template('skip-locked-queue'), driver, probe, 4, 10, { withRuns: true });
    expect(batch.outcomes.map((o) => o.index)).toEqual([4, 5]);
    expect(batch.runs).toHaveLength(2);
  }, 60_000);
});
