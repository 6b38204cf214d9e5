/**
 * Wait-for graph model and layout. D3 computes (force layout on copied nodes, a fixed number of
 * ticks, path strings); the Svelte component only draws the result.
 */
import { forceCollide, forceLink, forceManyBody, forceSimulation, forceX, forceY, path as d3path } from 'd3';
import type { SimulationLinkDatum, SimulationNodeDatum } from 'd3';
import type { EngineSnapshot, LockRow } from '../../engine/types';
import { sessionKey, type SessionStateKey } from './session';
import { committedTracked, doomedSessions, rwDependencies } from './ssi';

export interface Point {
  x: number;
  y: number;
}

export interface GraphNode {
  id: string;
  kind: 'session' | 'lock';
  label: string;
  pid?: number;
  xid?: number | null;
  state?: SessionStateKey;
  victim: boolean;
  inCycle: boolean;
  /** SERIALIZABLE: the session's running transaction is doomed (its next statement or COMMIT fails with 40001). */
  doomed?: boolean;
  /** SERIALIZABLE: a committed transaction of this session is still tracked (its rw edges and SIRead locks live on). */
  ssiCommitted?: boolean;
}

export interface GraphEdge {
  id: string;
  from: string;
  to: string;
  /** hard / soft: lock waits; holds: resource view; rw: an SSI rw-antidependency (never a wait). */
  kind: 'hard' | 'soft' | 'holds' | 'rw';
  label: string;
  inCycle: boolean;
  /** rw edges: whether the reader's / the writer's transaction has committed. */
  committed?: { from: boolean; to: boolean };
}

export interface GraphModel {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

/** Sessions as nodes, snapshot.edges as edges (the classic wait-for graph). */
export function waitForGraph(snap: EngineSnapshot): GraphModel {
  const victim = currentDeadlock(snap)?.victim;
  const cycle = new Set(snap.edges.filter((e) => e.inCycle).flatMap((e) => [e.from, e.to]));
  const doomed = doomedSessions(snap.ssi);
  const committed = committedTracked(snap.ssi);
  const nodes: GraphNode[] = snap.sessions.map((s) => ({
    id: s.name,
    kind: 'session',
    label: s.name,
    pid: s.pid,
    xid: s.xid,
    state: sessionKey(s),
    victim: s.name === victim,
    inCycle: cycle.has(s.name),
    doomed: doomed.has(s.name),
    ssiCommitted: committed.has(s.name),
  }));
  const seen = new Map<string, number>();
  const edges: GraphEdge[] = snap.edges.map((e) => {
    const base = `${e.from}->${e.to}`;
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    return { id: n ? `${base}#${n}` : base, from: e.from, to: e.to, kind: e.kind, label: e.label, inCycle: e.inCycle };
  });
  return { nodes, edges };
}

/**
 * SERIALIZABLE's rw-antidependencies as a second kind of edge, reader → writer, labelled "rw".
 * Kept apart from `waitForGraph(...).edges`: they are not waits and take no part in deadlocks.
 */
export function rwEdges(snap: EngineSnapshot): GraphEdge[] {
  return rwDependencies(snap).map((d) => ({
    id: d.id,
    from: d.from,
    to: d.to,
    kind: 'rw',
    label: 'rw',
    inCycle: false,
    committed: { from: d.fromCommitted, to: d.toCommitted },
  }));
}

/** A stable key and a readable name for the object a pg_locks row locks. */
export function lockObject(row: LockRow): { key: string; label: string } {
  switch (row.locktype) {
    case 'transactionid':
      return { key: `xid:${row.transactionid}`, label: `transaction ${row.transactionid}` };
    case 'virtualxid':
      return { key: `vxid:${row.virtualxid}`, label: `virtual transaction ${row.virtualxid}` };
    case 'tuple':
      return {
        key: `tuple:${row.relation}:${row.page}:${row.tuple}`,
        label: `tuple (${row.page},${row.tuple}) of ${row.relation}`,
      };
    case 'relation':
      return { key: `rel:${row.relation}`, label: `relation ${row.relation}` };
    case 'advisory':
      return { key: `adv:${row.classid}:${row.objid}:${row.objsubid}`, label: `advisory lock ${row.classid}:${row.objid}` };
  }
}

/**
 * Bipartite view: sessions and the lock objects somebody waits for. A waiting row gives an
 * edge session → lock ("requests mode"); a granted row on the same object gives lock → session.
 */
export function resourceGraph(snap: EngineSnapshot): GraphModel {
  const base = waitForGraph(snap);
  const contested = new Map<string, string>();
  for (const r of snap.locks)
    if (!r.granted) {
      const o = lockObject(r);
      contested.set(o.key, o.label);
    }
  const cycleSessions = new Set(base.nodes.filter((n) => n.inCycle).map((n) => n.id));
  const edges: GraphEdge[] = [];
  for (const r of snap.locks) {
    const o = lockObject(r);
    if (!contested.has(o.key)) continue;
    const inCycle = cycleSessions.has(r.session);
    edges.push(
      r.granted
        ? { id: `${o.key}->${r.session}:${r.mode}`, from: o.key, to: r.session, kind: 'holds', label: r.mode, inCycle }
        : { id: `${r.session}->${o.key}:${r.mode}`, from: r.session, to: o.key, kind: 'hard', label: r.mode, inCycle },
    );
  }
  const lockNodes: GraphNode[] = [...contested].map(([key, label]) => ({
    id: key,
    kind: 'lock',
    label,
    victim: false,
    inCycle: edges.some((e) => e.inCycle && (e.from === key || e.to === key)),
  }));
  return { nodes: [...base.nodes, ...lockNodes], edges };
}

export interface LayoutOptions {
  width: number;
  height: number;
  /** Node radius used for collision and clamping. */
  radius: number;
  ticks?: number;
}

interface SimNode extends SimulationNodeDatum {
  id: string;
}

/**
 * Positions for `ids`: nodes seen before keep their previous position (pinned), new nodes are
 * placed by a force simulation run for a fixed number of ticks. Deterministic; inputs untouched.
 */
export function layoutNodes(
  ids: readonly string[],
  links: readonly { from: string; to: string }[],
  previous: ReadonlyMap<string, Point>,
  opts: LayoutOptions,
): Map<string, Point> {
  const { width, height, radius } = opts;
  const cx = width / 2;
  const cy = height / 2;
  const fresh = ids.filter((id) => !previous.has(id));
  const ring = Math.min(width, height) / 3;
  const nodes: SimNode[] = ids.map((id) => {
    const p = previous.get(id);
    if (p) return { id, x: p.x, y: p.y, fx: p.x, fy: p.y };
    // New nodes start on a circle, in id order, so the result does not depend on chance.
    const k = fresh.indexOf(id);
    const angle = Math.PI + (2 * Math.PI * k) / Math.max(1, fresh.length);
    return { id, x: cx + ring * Math.cos(angle), y: cy + ring * Math.sin(angle) };
  });
  const known = new Set(ids);
  const simLinks: SimulationLinkDatum<SimNode>[] = links
    .filter((l) => known.has(l.from) && known.has(l.to) && l.from !== l.to)
    .map((l) => ({ source: l.from, target: l.to }));
  if (fresh.length) {
    const sim = forceSimulation<SimNode>(nodes)
      .force('charge', forceManyBody<SimNode>().strength(-2400))
      .force(
        'link',
        forceLink<SimNode, SimulationLinkDatum<SimNode>>(simLinks)
          .id((d) => d.id)
          .distance(Math.min(width * 0.62, Math.hypot(width, height) * 0.5)),
      )
      .force('collide', forceCollide<SimNode>(radius * 1.8))
      .force('x', forceX<SimNode>(cx).strength(0.03))
      .force('y', forceY<SimNode>(cy).strength(0.08))
      .stop();
    sim.tick(opts.ticks ?? 200);
  }
  const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
  const out = new Map<string, Point>();
  for (const n of nodes) {
    // Room for the labels around a node: state below, victim badge above, wide text on the sides.
    const mx = Math.min(radius * 2.3, width / 4);
    const x = clamp(n.x ?? cx, mx, width - mx);
    const y = clamp(n.y ?? cy, Math.min(radius + 22, height / 2), Math.max(height - radius - 26, height / 2));
    out.set(n.id, { x: round2(x), y: round2(y) });
  }
  return out;
}

function round2(v: number): number {
  return Math.round(v * 100) / 100;
}

export interface EdgeGeometry {
  id: string;
  /** SVG path data, trimmed to the node circles. */
  d: string;
  label: Point;
  /** Other places for the label along the edge, best first (used when `label` would cover a node or another label). */
  alt?: Point[];
}

/**
 * Path strings for the edges: straight when alone, bent when a pair of nodes has several edges
 * (A→B and B→A bend to opposite sides so a two-session cycle reads as a loop).
 */
export function edgeGeometry(
  edges: readonly { id: string; from: string; to: string }[],
  positions: ReadonlyMap<string, Point>,
  radius: number,
  opts: { bend?: number; arrowGap?: number; labelLift?: number } = {},
): EdgeGeometry[] {
  const bend = opts.bend ?? 36;
  const arrowGap = opts.arrowGap ?? 6;
  const lift = opts.labelLift ?? 0;
  const pairKey = (a: string, b: string) => (a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`);
  const groups = new Map<string, string[]>();
  for (const e of edges) {
    const k = pairKey(e.from, e.to);
    groups.set(k, [...(groups.get(k) ?? []), e.id]);
  }
  const out: EdgeGeometry[] = [];
  for (const e of edges) {
    const p0 = positions.get(e.from);
    const p1 = positions.get(e.to);
    if (!p0 || !p1 || e.from === e.to) continue;
    const len = Math.hypot(p1.x - p0.x, p1.y - p0.y);
    if (len === 0) continue;
    const group = groups.get(pairKey(e.from, e.to))!;
    const i = group.indexOf(e.id);
    // Offset in the canonical (sorted) direction, flipped for the reverse direction: A→B and
    // B→A then bend to opposite sides.
    let offset = group.length > 1 ? (i - (group.length - 1) / 2) * 2 * bend : 0;
    if (e.from > e.to) offset = -offset;
    const ux = (p1.x - p0.x) / len;
    const uy = (p1.y - p0.y) / len;
    const c = { x: (p0.x + p1.x) / 2 - uy * offset, y: (p0.y + p1.y) / 2 + ux * offset };
    const start = towards(p0, c, radius);
    const end = towards(p1, c, radius + arrowGap);
    const p = d3path();
    p.moveTo(r2(start.x), r2(start.y));
    if (offset === 0) p.lineTo(r2(end.x), r2(end.y));
    else p.quadraticCurveTo(r2(c.x), r2(c.y), r2(end.x), r2(end.y));
    // The label sits on the outer side of the bulge (above a straight edge), clear of the line.
    const side = offset === 0 ? -1 : Math.sign(offset);
    // A point on the curve at parameter t, lifted to side `sd` of the edge.
    const at = (t: number, sd: number): Point => {
      const a = (1 - t) * (1 - t);
      const b = 2 * t * (1 - t);
      const q = t * t;
      return {
        x: r2(a * start.x + b * c.x + q * end.x - uy * lift * sd),
        y: r2(a * start.y + b * c.y + q * end.y + ux * lift * sd),
      };
    };
    out.push({
      id: e.id,
      d: p.toString(),
      label: at(0.5, side),
      alt: [
        at(0.35, side),
        at(0.65, side),
        at(0.5, -side),
        at(0.22, side),
        at(0.78, side),
        at(0.35, -side),
        at(0.65, -side),
        at(0.5, 2 * side),
        at(0.5, -2 * side),
        at(0.3, 2 * side),
        at(0.7, 2 * side),
        at(0.5, 3 * side),
        at(0.5, -3 * side),
      ],
    });
  }
  return out;
}

/** A label's size in the graph's pixels (estimated from its text: the layout runs before it is drawn). */
export interface LabelSize {
  w: number;
  h: number;
}

/**
 * Label positions that keep edge labels off the nodes (the circle and the state line under it) and
 * off each other: each label takes its preferred place unless that overlaps a node or a label placed
 * before it, else the first free alternative along its edge; when none is free, the one that
 * overlaps least. Labels are placed in edge order, so the result is deterministic.
 */
export function placeLabels(
  geometry: readonly EdgeGeometry[],
  sizes: ReadonlyMap<string, LabelSize>,
  nodes: ReadonlyMap<string, Point>,
  node: { radius: number; below: number },
  box: { width: number; height: number },
): Map<string, Point> {
  type Rect = { x0: number; y0: number; x1: number; y1: number };
  const obstacles: Rect[] = [...nodes.values()].map((p) => ({
    x0: p.x - node.radius,
    y0: p.y - node.radius,
    x1: p.x + node.radius,
    y1: p.y + node.radius + node.below,
  }));
  const overlap = (a: Rect, b: Rect) =>
    Math.max(0, Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0)) * Math.max(0, Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0));
  const out = new Map<string, Point>();
  for (const g of geometry) {
    const size = sizes.get(g.id) ?? { w: 0, h: 0 };
    let best: { p: Point; cost: number } | null = null;
    for (const p of [g.label, ...(g.alt ?? [])]) {
      const r = { x0: p.x - size.w / 2, y0: p.y - size.h / 2, x1: p.x + size.w / 2, y1: p.y + size.h / 2 };
      // Leaving the box costs as much as covering a node: the SVG clips it.
      const outside = Math.max(0, -r.x0) + Math.max(0, r.x1 - box.width) + Math.max(0, -r.y0) + Math.max(0, r.y1 - box.height);
      const cost = obstacles.reduce((sum, o) => sum + overlap(r, o), 0) + outside * size.h;
      if (!best || cost < best.cost) best = { p, cost };
      if (cost === 0) break;
    }
    const p = best?.p ?? g.label;
    out.set(g.id, p);
    obstacles.push({ x0: p.x - size.w / 2, y0: p.y - size.h / 2, x1: p.x + size.w / 2, y1: p.y + size.h / 2 });
  }
  return out;
}

/**
 * Where a wide badge above a node starts: centred on a node in the middle third of the box, else
 * flush with the node's outer edge and running towards the middle, so long texts (the doomed
 * badge, in Russian too) stay inside the box. `x` is relative to the node's centre.
 */
export function badgeAnchor(nodeX: number, width: number, radius: number): { anchor: 'start' | 'middle' | 'end'; x: number } {
  if (nodeX < width / 3) return { anchor: 'start', x: -radius };
  if (nodeX > (2 * width) / 3) return { anchor: 'end', x: radius };
  return { anchor: 'middle', x: 0 };
}

/** The point at distance `dist` from `from` in the direction of `to`. */
function towards(from: Point, to: Point, dist: number): Point {
  const len = Math.hypot(to.x - from.x, to.y - from.y) || 1;
  return { x: from.x + ((to.x - from.x) / len) * dist, y: from.y + ((to.y - from.y) / len) * dist };
}

function r2(v: number): number {
  return Math.round(v * 100) / 100;
}

/**
 * Right after a deadlock is resolved the cycle's edges are gone from `edges`; these ghost edges
 * show the cycle the victim broke (labels from each member's last wait). Empty at any other time.
 */
export function brokenCycleEdges(snap: EngineSnapshot): GraphEdge[] {
  const dl = currentDeadlock(snap);
  if (!dl || snap.edges.some((e) => e.inCycle)) return [];
  // The victim's DETAIL names every member's request, including one the detector refused before
  // it ever waited (an early "simple" deadlock logs no wait event); waits seen earlier fill the rest.
  const requested = deadlockRequests(snap);
  const lastWait = new Map<string, string>();
  for (const e of snap.events) if (e.type === 'wait' && e.atMs <= dl.atMs) lastWait.set(e.session, e.reason.description);
  return dl.cycle.map((from, i) => {
    const to = dl.cycle[(i + 1) % dl.cycle.length];
    return { id: `broken:${from}->${to}`, from, to, kind: 'hard', label: requested.get(from) ?? lastWait.get(from) ?? '', inCycle: true };
  });
}

/**
 * The last deadlock while it is still the present: its victim's latest statement is the one that
 * failed with 40P01 and the victim has sent nothing since. Null once the victim moves on (ROLLBACK,
 * a new statement) or when there was none: history belongs to the timeline and the log.
 */
export function currentDeadlock(snap: EngineSnapshot): EngineSnapshot['deadlock'] {
  const dl = snap.deadlock;
  if (!dl) return null;
  let current = false;
  for (const e of snap.events) {
    if (e.type !== 'step-start' && e.type !== 'step-done' && e.type !== 'commit' && e.type !== 'rollback') continue;
    if (e.session !== dl.victim) continue;
    current = e.type === 'step-done' && e.sqlstate === '40P01' && e.atMs >= dl.atMs;
  }
  return current ? dl : null;
}

const DETAIL_LINE = /^Process (\d+) waits for (.+); blocked by process (\d+)\.$/;

/** What each cycle member requested, by session, from the victim's 40P01 DETAIL ("Process P waits for X; blocked by process Q."). */
export function deadlockRequests(snap: EngineSnapshot): Map<string, string> {
  const out = new Map<string, string>();
  const dl = snap.deadlock;
  const victim = dl && snap.sessions.find((s) => s.name === dl.victim);
  if (!victim) return out;
  const failed = [...(victim.history ?? []), ...(victim.last ? [victim.last] : [])].filter((h) => h.error?.sqlstate === '40P01');
  const detail = failed.at(-1)?.error?.detail ?? '';
  const byPid = new Map(snap.sessions.map((s) => [s.pid, s.name]));
  for (const line of detail.split('\n')) {
    const m = DETAIL_LINE.exec(line.trim());
    const name = m && byPid.get(Number(m[1]));
    if (m && name && !out.has(name)) out.set(name, m[2]);
  }
  return out;
}

/** The cycle as words: "A → B → A". */
export function cyclePath(cycle: readonly string[]): string {
  return cycle.length ? [...cycle, cycle[0]].join(' → ') : '';
}
