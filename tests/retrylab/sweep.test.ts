/** The retry page's pure model: sweeps and chart layout. */
import { describe, expect, it } from 'vitest';
import { lineChart, sweepConfigs, workerCounts } from '../../src/ui/retry/sweep';
import { coursePolicyFor, DEFAULT_CONFIG } from '../../src/retrylab/types';
import { retryMessages, RETRY_MESSAGES } from '../../src/ui/retry/i18n';

describe('retry page model', () => {
  it.each([
    { max: 2, expected: [2] },
    { max: 5, expected: [2, 4, 5] },
    { max: 8, expected: [2, 4, 6, 8] },
  ])('workerCounts($max)', ({ max, expected }) => expect(workerCounts(max)).toEqual(expected));

  it('sweeps every strategy over every worker count, without mutating the base', () => {
    const base = Object.freeze({ ...DEFAULT_CONFIG, workers: 4 });
    const configs = sweepConfigs(base, ['unordered', 'ordered']);
    expect(configs.map((c) => `${c.strategy}/${c.workers}`)).toEqual(['unordered/2', 'unordered/4', 'ordered/2', 'ordered/4']);
    expect(base.workers).toBe(4);
  });

  it('lays out one series per strategy', () => {
    const r = (strategy: 'unordered' | 'ordered', workers: number, deadlocks: number) =>
      ({ config: { ...DEFAULT_CONFIG, strategy, workers }, deadlocks }) as never;
    const c = lineChart(
      [r('unordered', 2, 1), r('unordered', 4, 5), r('ordered', 2, 0)],
      (x: { deadlocks: number }) => x.deadlocks,
      400,
      200,
    );
    expect(c.series.map((s) => s.strategy)).toEqual(['unordered', 'ordered']);
    expect(c.series[0].path.startsWith('M')).toBe(true);
    expect(c.series[0].points[1].y).toBeLessThan(c.series[0].points[0].y);
  });

  it('gives each strategy the policy asked for: NOWAIT + retry retries 55P03 by the course', () => {
    const configs = sweepConfigs({ ...DEFAULT_CONFIG, workers: 2 }, ['unordered', 'nowait-retry'], coursePolicyFor);
    expect(configs.map((c) => [c.strategy, c.policy.retryOn])).toEqual([
      ['unordered', ['40P01', '40001']],
      ['nowait-retry', ['40P01', '40001', '55P03']],
    ]);
  });

  it('offers only whole-number ticks for counts, and distinct dash and marker per series', () => {
    const r = (strategy: 'unordered' | 'ordered' | 'advisory', workers: number, deadlocks: number) =>
      ({ config: { ...DEFAULT_CONFIG, strategy, workers }, deadlocks }) as never;
    const c = lineChart(
      [r('unordered', 2, 0), r('unordered', 4, 1), r('ordered', 2, 0), r('advisory', 2, 0)],
      (x: { deadlocks: number }) => x.deadlocks,
      640,
      320,
      { integer: true },
    );
    expect(c.yTicks.map((t) => t.v)).toEqual([0, 1]);
    expect(new Set(c.series.map((s) => s.dash)).size).toBe(3);
    expect(new Set(c.series.map((s) => JSON.stringify(s.marker))).size).toBe(3);
  });

  it('both languages have the same keys', () => {
    const keys = (o: object): string[] =>
      Object.entries(o).flatMap(([k, v]) => (typeof v === 'object' ? keys(v).map((x) => `${k}.${x}`) : [k]));
    expect(keys(RETRY_MESSAGES.ru)).toEqual(keys(RETRY_MESSAGES.en));
    expect(retryMessages('ru').nav).not.toBe(retryMessages('en').nav);
  });
});
