/** The page's model, pure: which runs a sweep makes, and chart layout with D3 scales. */
import { scaleBand, scaleLinear } from 'd3';
import type { LabConfig, LabResult, StrategyId } from '../../retrylab/types';

/** Worker counts of a sweep: 2, 4, … up to max (max always included). */
export function workerCounts(max: number): number[] {
  const out: number[] = [];
  for (let n = 2; n < max; n += 2) out.push(n);
  out.push(Math.max(2, max));
  return [...new Set(out)];
}

/** One configuration per (strategy, worker count). */
export function sweepConfigs(base: LabConfig, strategies: StrategyId[]): LabConfig[] {
  return strategies.flatMap((strategy) => workerCounts(base.workers).map((workers) => ({ ...base, strategy, workers })));
}

export interface Series {
  strategy: StrategyId;
  color: string;
  path: string;
  points: { x: number; y: number; value: number; workers: number }[];
}

export const STRATEGY_COLORS: Record<StrategyId, string> = {
  unordered: '#c0262d',
  ordered: '#1d7a35',
  'nowait-retry': '#b86e00',
  'skip-locked': '#2554c7',
  advisory: '#7a3ff2',
};

/** Line-chart layout of `metric` vs workers, one series per strategy. */
export function lineChart(results: LabResult[], metric: (r: LabResult) => number, width: number, height: number, pad = 34) {
  const xs = [...new Set(results.map((r) => r.config.workers))].sort((a, b) => a - b);
  const x = scaleLinear().domain([Math.min(...xs, 2), Math.max(...xs, 3)]).range([pad, width - 10]);
  const y = scaleLinear().domain([0, Math.max(1, ...results.map(metric))]).nice().range([height - 22, 8]);
  const strategies = [...new Set(results.map((r) => r.config.strategy))];
  const series: Series[] = strategies.map((strategy) => {
    const points = results
      .filter((r) => r.config.strategy === strategy)
      .sort((a, b) => a.config.workers - b.config.workers)
      .map((r) => ({ x: x(r.config.workers), y: y(metric(r)), value: metric(r), workers: r.config.workers }));
    return { strategy, color: STRATEGY_COLORS[strategy], points, path: points.map((p, i) => `${i ? 'L' : 'M'}${p.x},${p.y}`).join('') };
  });
  return { series, xTicks: xs.map((v) => ({ v, x: x(v) })), yTicks: y.ticks(4).map((v) => ({ v, y: y(v) })), x0: pad, y0: height - 22 };
}

export const OUTCOME_COLORS: Record<string, string> = {
  commit: '#1d7a35',
  deadlock: '#c0262d',
  serialization: '#7a3ff2',
  'lock-not-available': '#b86e00',
  error: '#5b6470',
  cancelled: '#5b6470',
};

/** Timeline layout: one lane per worker, one bar per attempt, lock waits as overlays. */
export function timelineLayout(r: LabResult, width: number, limit = 60, lane = 18, pad = 30) {
  const attempts = r.timeline.slice(0, limit);
  const end = Math.max(1, ...attempts.map((a) => a.endMs + (a.backoffMs ?? 0)));
  const x = scaleLinear().domain([0, end]).range([pad, width - 8]);
  const y = scaleBand<number>().domain([...Array(r.config.workers).keys()]).range([4, 4 + lane * r.config.workers]).padding(0.2);
  const bars = attempts.map((a, i) => ({
    key: i,
    x: x(a.startMs),
    w: Math.max(1.5, x(a.endMs) - x(a.startMs)),
    y: y(a.worker) ?? 0,
    h: y.bandwidth(),
    color: OUTCOME_COLORS[a.outcome],
    title: `w${a.worker + 1} tx ${a.tx + 1} attempt ${a.attempt + 1}: ${a.outcome}${a.sqlstate ? ` ${a.sqlstate}` : ''} ${a.startMs}–${a.endMs} ms${a.backoffMs ? `, backoff ${a.backoffMs} ms` : ''}`,
    waits: a.waits.map(([s, e]) => ({ x: x(s), w: Math.max(1, x(e) - x(s)) })),
  }));
  return { bars, height: 8 + lane * r.config.workers + 16, lanes: [...Array(r.config.workers).keys()].map((w) => ({ w, y: (y(w) ?? 0) + y.bandwidth() / 2 })), ticks: x.ticks(6).map((v) => ({ v, x: x(v) })) };
}
