/**
 * The script a player steps through: a permutation's steps as script items (a step, or a pause
 * of the lesson's clock). Pure, so the engine's Player and the page (which shows a lesson's
 * narration while the engine starts) build the same items from the same spec.
 */
import type { Permutation, ScriptItem, Spec } from './types';
import { checkSpec } from './isolation';
import { CLOCK_SESSION } from './lesson';

/** One permutation step resolved to its session and SQL. */
export interface ScriptStep {
  session: string;
  name: string;
  sql: string;
  /** The permutation marked it `(*)`: isolationtester does not wait for it after sending. */
  star: boolean;
}

/** The permutation's steps with their sessions and SQL (checked as isolationtester checks a spec). */
export function scriptSteps(spec: Spec, perm: Permutation): ScriptStep[] {
  const lookup = checkSpec(spec);
  return perm.steps.map((p) => {
    const info = lookup.get(p.step);
    if (!info) throw new Error(`undefined step "${p.step}" specified in permutation`);
    return { session: info.session, name: info.name, sql: info.sql, star: p.blockers.some((b) => b.kind === 'star') };
  });
}

const PAUSE_RE = /^\s*SELECT\s+pg_sleep\(\s*(\d+(?:\.\d+)?)\s*\)\s*;?\s*$/i;

/** A step as the player lists it: the clock session's `pg_sleep` is a pause of the virtual clock. */
export function scriptItem(step: ScriptStep, index: number): ScriptItem {
  const pause = step.session === CLOCK_SESSION ? PAUSE_RE.exec(step.sql) : null;
  if (pause) {
    const ms = Math.round(Number(pause[1]) * 1000);
    return { index, kind: 'pause', session: step.session, step: step.name, sql: step.sql, label: `pause ${formatMs(ms)}` };
  }
  const oneLine = step.sql.replace(/\s+/g, ' ').trim();
  return { index, kind: 'step', session: step.session, step: step.name, sql: step.sql, label: `${step.session}: ${oneLine}` };
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`;
}
