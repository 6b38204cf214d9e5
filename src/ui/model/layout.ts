/** Page-layout decisions the views share (pure): which session panes need a full row. */
import type { EngineSnapshot } from '../../engine/types';
import type { ScriptItem } from '../backend';

/** A statement line longer than this, or a result wider than this many columns, needs a full-width pane. */
const WIDE_LINE = 72;
const WIDE_COLUMNS = 4;

/**
 * Sessions whose pane needs the full width of the session grid: a scripted statement with long
 * lines (an observer's catalog query) or a result with many columns. In a narrow grid cell such a
 * pane wraps its query into a tall column and cuts its result table off.
 */
export function wideSessions(script: readonly ScriptItem[], snap: EngineSnapshot): Set<string> {
  const wide = new Set<string>();
  for (const it of script) {
    if (it.kind !== 'step' || !it.session || !it.sql) continue;
    if (it.sql.split('\n').some((line) => line.length > WIDE_LINE)) wide.add(it.session);
  }
  for (const s of snap.sessions) {
    const results = [...(s.pending?.results ?? []), ...(s.last?.results ?? [])];
    if (results.some((r) => (r.columns?.length ?? 0) > WIDE_COLUMNS)) wide.add(s.name);
  }
  // A single narrow pane beside full-row ones would sit in one grid cell with an empty cell
  // beside it, its statements wrapped into a tall column: it gets the row to itself too.
  const narrow = snap.sessions.filter((s) => !wide.has(s.name));
  if (wide.size && narrow.length === 1) wide.add(narrow[0].name);
  return wide;
}
