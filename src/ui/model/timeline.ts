/** Timeline model: one lane per session, wait bars and event marks over virtual time. */
import { scaleLinear } from 'd3';
import type { EngineEvent, EngineSnapshot } from '../../engine/types';

export type MarkKind = 'grant' | 'deadlock' | 'commit' | 'rollback' | 'timeout' | 'failed' | 'engine-error';

export interface TimelineBar {
  session: string;
  fromMs: number;
  toMs: number;
  what: string;
  open: boolean;
}

export interface TimelineMark {
  session: string;
  atMs: number;
  kind: MarkKind;
  event: EngineEvent;
}

export interface TimelineModel {
  lanes: string[];
  bars: TimelineBar[];
  marks: TimelineMark[];
  endMs: number;
}

/** Pairs each wait with the event that ends it; every other interesting event becomes a mark. */
export function timelineModel(snap: EngineSnapshot): TimelineModel {
  const lanes = snap.sessions.map((s) => s.name);
  const bars: TimelineBar[] = [];
  const marks: TimelineMark[] = [];
  const openWait = new Map<string, { fromMs: number; what: string }>();
  const close = (session: string, atMs: number) => {
    const w = openWait.get(session);
    if (!w) return;
    bars.push({ session, fromMs: w.fromMs, toMs: atMs, what: w.what, open: false });
    openWait.delete(session);
  };
  for (const e of snap.events) {
    switch (e.type) {
      case 'wait':
        close(e.session, e.atMs);
        openWait.set(e.session, { fromMs: e.atMs, what: e.reason.description });
        break;
      case 'grant':
        close(e.session, e.atMs);
        marks.push({ session: e.session, atMs: e.atMs, kind: 'grant', event: e });
        break;
      case 'step-done':
        close(e.session, e.atMs);
        if (!e.ok) marks.push({ session: e.session, atMs: e.atMs, kind: 'failed', event: e });
        break;
      case 'deadlock':
        close(e.victim, e.atMs);
        marks.push({ session: e.victim, atMs: e.atMs, kind: 'deadlock', event: e });
        break;
      case 'timeout':
        close(e.session, e.atMs);
        marks.push({ session: e.session, atMs: e.atMs, kind: 'timeout', event: e });
        break;
      case 'commit':
      case 'rollback':
        close(e.session, e.atMs);
        marks.push({ session: e.session, atMs: e.atMs, kind: e.type, event: e });
        break;
      case 'engine-error':
        marks.push({ session: e.session, atMs: e.atMs, kind: 'engine-error', event: e });
        break;
      default:
        break;
    }
    if (!lanes.includes(sessionOf(e))) lanes.push(sessionOf(e));
  }
  for (const [session, w] of openWait) bars.push({ session, fromMs: w.fromMs, toMs: snap.clockMs, what: w.what, open: true });
  const lastEvent = snap.events.reduce((m, e) => Math.max(m, e.atMs), 0);
  return { lanes, bars, marks, endMs: Math.max(snap.clockMs, lastEvent) };
}

function sessionOf(e: EngineEvent): string {
  return e.type === 'deadlock' ? e.victim : e.session;
}

/** The x scale: virtual ms → pixels, with a little room at the end; never a zero-width domain. */
export function timeScale(endMs: number, x0: number, x1: number) {
  return scaleLinear()
    .domain([0, Math.max(1000, endMs * 1.05)])
    .range([x0, x1]);
}

/** A mark with where it is drawn: `cx` (spread so it never hides another) and `x`, its true time. */
export interface PlacedMark extends TimelineMark {
  x: number;
  cx: number;
}

/**
 * Places marks so that each one can be seen, pointed at and clicked: in a lane, a mark closer
 * than `gap` px to the previous one (same moment, or nearly) moves right, in event order; a
 * leader line joins it to its true time `x`.
 */
export function placeMarks(marks: readonly TimelineMark[], x: (ms: number) => number, gap: number): PlacedMark[] {
  const lastCx = new Map<string, number>();
  const order = marks.map((m, i) => ({ m, i })).sort((a, b) => a.m.atMs - b.m.atMs || a.i - b.i);
  const placed: PlacedMark[] = new Array(marks.length);
  for (const { m, i } of order) {
    const px = x(m.atMs);
    const prev = lastCx.get(m.session);
    const cx = prev !== undefined && px - prev < gap ? prev + gap : px;
    lastCx.set(m.session, cx);
    placed[i] = { ...m, x: px, cx };
  }
  return placed;
}
