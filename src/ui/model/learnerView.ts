/**
 * What the learner sees of a snapshot. Compiled lessons run their pauses (`pause: 2s`) as
 * `SELECT pg_sleep(n)` in an internal observer session (`clock`, see scenario/lesson.ts
 * CLOCK_SESSION) so real PostgreSQL can replay them; that session is plumbing, not part of the
 * story, so the player hides it everywhere: panes, graph nodes, timeline lanes, held modes,
 * pg_locks rows, timers, row lockers and SERIALIZABLE (SSI) bookkeeping. A lesson opened in the
 * lab is a spec with the same `clock` session, so the rule is the script's, not the source's: a
 * session whose every item is a pause (the player makes pause items only of `clock`'s
 * `SELECT pg_sleep(n)` steps) is hidden; a `clock` session that runs anything else stays visible. Pure.
 */
import type { EngineSnapshot } from '../../engine/types';
import type { PlayerState } from '../backend';

const NONE: ReadonlySet<string> = new Set();

/** The sessions the script uses only for pauses. */
export function pauseSessions(state: Pick<PlayerState, 'script'>): ReadonlySet<string> {
  const pauses = new Set<string>();
  const others = new Set<string>();
  for (const item of state.script) {
    if (item.session === undefined) continue;
    (item.kind === 'pause' ? pauses : others).add(item.session);
  }
  for (const s of others) pauses.delete(s);
  return pauses.size ? pauses : NONE;
}

/** The snapshot without the hidden sessions (the same object when nothing is hidden). */
export function withoutSessions(snap: EngineSnapshot, hidden: ReadonlySet<string>): EngineSnapshot {
  if (hidden.size === 0 || !snap.sessions.some((s) => hidden.has(s.name))) return snap;
  const shown = (name: string) => !hidden.has(name);
  return {
    ...snap,
    sessions: snap.sessions.filter((s) => shown(s.name)),
    locks: snap.locks.filter((l) => shown(l.session)),
    edges: snap.edges.filter((e) => shown(e.from) && shown(e.to)),
    timers: snap.timers.filter((t) => shown(t.session)),
    ...(snap.ssi && {
      ssi: {
        transactions: snap.ssi.transactions.filter((x) => shown(x.session)),
        conflicts: snap.ssi.conflicts.filter((c) => shown(c.from) && shown(c.to)),
      },
    }),
    events: snap.events.filter((e) => shown(e.type === 'deadlock' ? e.victim : e.session)),
    tables: snap.tables.map((t) => ({
      ...t,
      rows: t.rows.map((r) =>
        r.lockers.some((l) => !shown(l.session)) ? { ...r, lockers: r.lockers.filter((l) => shown(l.session)) } : r,
      ),
    })),
  };
}

/** The snapshot a learner sees for a player state. */
export function learnerSnapshot(state: PlayerState): EngineSnapshot {
  return withoutSessions(state.snapshot, pauseSessions(state));
}
