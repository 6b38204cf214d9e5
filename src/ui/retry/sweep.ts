/** The page's model, pure: which runs a sweep makes, and chart layout with D3 scales. */
import { scaleBand, scaleLinear } from 'd3';
import type { LabConfig, LabResult, RetryPolicy, StrategyId } from '../../retrylab/types';

/** Worker counts of a sweep: 2, 4, … up to max (max always included). */
export function workerCounts(max: number): number[] {
  const out: number[] = [];
  for (let n = 2; n < max; n += 2) out.push(n);
  out.push(Math.max(2, max));
  return [...new Set(out)];
}

/** One configuration per (strategy, worker count); `policyOf` gives each strategy its own retry policy. */
export function sweepConfigs(
  base: LabConfig,
  strategies: StrategyId[],
  policyOf: (s: StrategyId) => RetryPolicy = () => base.policy,
): LabConfig[] {
  return strategies.flatMap((strategy) =>
    workerCounts(base.workers).map((workers) => ({ ...base, strategy, workers, policy: policyOf(strategy) })),
  );
}

export interface Series {
  strategy: StrategyId;
  color: string;
  /** stroke-dasharray ('' = solid): lines that coincide stay distinguishable. */
  dash: string;
  /** The marker drawn at each point, centred on 0,0 (translate it to the point). */
  marker: Marker;
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

/** Marker shapes; the series lines are the charts' only <path> elements. */
export type MarkerShape = 'circle' | 'square' | 'triangle' | 'diamond' | 'cross';

/** A marker centred on 0,0: a circle of radius `r`, or a polygon. */
export type Marker = { r: number; points?: undefined } | { r?: undefined; points: string };

/** Each strategy's line pattern and marker shape, so the series differ by more than colour. */
export const STRATEGY_STYLES: Record<StrategyId, { dash: string; shape: MarkerShape }> = {
  unordered: { dash: '', shape: 'circle' },
  ordered: { dash: '9 4', shape: 'square' },
  'nowait-retry': { dash: '2 4', shape: 'triangle' },
  'skip-locked': { dash: '12 4 2 4', shape: 'diamond' },
  advisory: { dash: '5 5', shape: 'cross' },
};

/** The marker of `shape` with half-width `h` px. */
export function marker(shape: MarkerShape, h: number): Marker {
  const pts = (xy: number[][]) => ({ points: xy.map(([x, y]) => `${+x.toFixed(2)},${+y.toFixed(2)}`).join(' ') });
  const t = h / 3;
  switch (shape) {
    case 'circle':
      return { r: h };
    case 'square':
      return pts([
        [-h, -h],
        [h, -h],
        [h, h],
        [-h, h],
      ]);
    case 'triangle':
      return pts([
        [0, -h * 1.15],
        [h * 1.1, h * 0.75],
        [-h * 1.1, h * 0.75],
      ]);
    case 'diamond':
      return pts([
        [0, -h * 1.3],
        [h, 0],
        [0, h * 1.3],
        [-h, 0],
      ]);
    case 'cross':
      return pts([
        [-t, -h],
        [t, -h],
        [t, -t],
        [h, -t],
        [h, t],
        [t, t],
        [t, h],
        [-t, h],
        [-t, t],
        [-h, t],
        [-h, -t],
        [-t, -t],
      ]);
  }
}

/** Plot margins: room for tick labels and the axis titles. */
export const CHART_MARGIN = { left: 64, right: 14, top: 12, bottom: 48 };

/**
 * Line-chart layout of `metric` vs workers, one series per strategy. `integer`: the metric is a
 * count, so only whole-number ticks are offered. Markers shrink from the first series to the
 * last, so points that coincide show as nested shapes.
 */
export function lineChart(
  results: LabResult[],
  metric: (r: LabResult) => number,
  width: number,
  height: number,
  opts: { integer?: boolean } = {},
) {
  const m = CHART_MARGIN;
  const xs = [...new Set(results.map((r) => r.config.workers))].sort((a, b) => a - b);
  const x = scaleLinear()
    .domain([Math.min(...xs, 2), Math.max(...xs, 3)])
    .range([m.left + 8, width - m.right - 8]);
  const y = scaleLinear()
    .domain([0, Math.max(1, ...results.map(metric))])
    .nice()
    .range([height - m.bottom, m.top]);
  const strategies = [...new Set(results.map((r) => r.config.strategy))];
  const series: Series[] = strategies.map((strategy, i) => {
    const points = results
      .filter((r) => r.config.strategy === strategy)
      .sort((a, b) => a.config.workers - b.config.workers)
      .map((r) => ({ x: x(r.config.workers), y: y(metric(r)), value: metric(r), workers: r.config.workers }));
    const half = Math.max(3, 7.5 - 1.5 * i);
    return {
      strategy,
      color: STRATEGY_COLORS[strategy],
      dash: STRATEGY_STYLES[strategy].dash,
      marker: marker(STRATEGY_STYLES[strategy].shape, half),
      points,
      path: points.map((p, k) => `${k ? 'L' : 'M'}${p.x},${p.y}`).join(''),
    };
  });
  const ticks = y.ticks(5).filter((v) => !opts.integer || Number.isInteger(v));
  return {
    series,
    xTicks: xs.map((v) => ({ v, x: x(v) })),
    yTicks: ticks.map((v) => ({ v, y: y(v) })),
    x0: m.left,
    y0: height - m.bottom,
    x1: width - m.right,
    y1: m.top,
  };
}

/** A legend entry's marker, centred on 0,0. */
export function legendMarker(strategy: StrategyId): Marker {
  return marker(STRATEGY_STYLES[strategy].shape, 5);
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
  const x = scaleLinear()
    .domain([0, end])
    .range([pad, width - 8]);
  const y = scaleBand<number>()
    .domain([...Array(r.config.workers).keys()])
    .range([4, 4 + lane * r.config.workers])
    .padding(0.2);
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
  return {
    bars,
    height: 8 + lane * r.config.workers + 16,
    lanes: [...Array(r.config.workers).keys()].map((w) => ({ w, y: (y(w) ?? 0) + y.bandwidth() / 2 })),
    ticks: x.ticks(6).map((v) => ({ v, x: x(v) })),
  };
}
