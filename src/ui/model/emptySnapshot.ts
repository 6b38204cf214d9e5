import type { EngineSnapshot } from '../../engine/types';

/** A snapshot of nothing: no session, lock, table or event (what a view shows before the engine's first answer). */
export const EMPTY_SNAPSHOT: EngineSnapshot = Object.freeze({
  clockMs: 0,
  sessions: [],
  locks: [],
  edges: [],
  deadlock: null,
  tables: [],
  timers: [],
  events: [],
  serverLog: [],
});
