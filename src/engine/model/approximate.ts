/** Lockstep's notes on a step that touches something the simulator approximates (approximations.ts). */
import { APPROXIMATION_TEXT, asksDeferrable, createsTempTable, type ApproximationTopic } from '../approximations';
import type { ParsedStatement } from '../sql';
import { event, type ModelState, type Sess } from '../state';

/** Says so on the step when a statement touches something the simulator approximates (once per topic and step). */
export function approximate(eng: ModelState, s: Sess, topic: ApproximationTopic): void {
  const step = s.step;
  if (!step || step.approximations?.includes(topic)) return;
  (step.approximations ??= []).push(topic);
  event(eng, { type: 'approximation', atMs: eng.clock, session: s.name, topic, message: APPROXIMATION_TEXT[topic] });
}

/** The approximations a statement's text alone shows: a temporary table, SERIALIZABLE DEFERRABLE. */
export function noteApproximations(eng: ModelState, s: Sess, st: ParsedStatement): void {
  const cls = st.cls;
  if (cls.kind === 'dml' && cls.verb === 'other' && /\btemp(orary)?\b/i.test(st.sql) && createsTempTable(st.sql))
    approximate(eng, s, 'temp-table');
  const isolation =
    cls.kind === 'txn' && cls.ctl.kind === 'begin'
      ? (cls.ctl.isolation ?? (s.txn?.implicit ? s.txn.isolation : s.defaultIsolation))
      : cls.kind === 'set' && cls.setTransaction
        ? (cls.isolation ?? s.txn?.isolation ?? s.defaultIsolation)
        : undefined;
  if (isolation === 'serializable' && /deferrable/i.test(st.sql) && asksDeferrable(st.sql)) approximate(eng, s, 'serializable-read-only');
  // REFRESH MATERIALIZED VIEW reads the view's query and rewrites the view inside the utility
  // command: its reads and writes are not among the SSI facts the engine collects.
  const own = s.txn?.isolation ?? s.defaultIsolation;
  if (own === 'serializable' && /^\s*refresh\s+materialized\s+view\b/i.test(st.sql)) approximate(eng, s, 'matview-serializable');
}
