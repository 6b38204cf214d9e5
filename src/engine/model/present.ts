/** How the model shows lock tags, waits and session states to people (names, shifted OIDs). */
import { describeLockTag } from './locks/describe';
import type { LockTag } from './locks/types';
import { DATABASE_OID, FIRST_USER_OID, type ModelState, type Sess } from '../state';
import type { SessionState, WaitReason } from '../types';

/** DescribeLockTag's words for a lock tag, with OIDs as shown. */
export function describe(eng: ModelState, tag: LockTag): string {
  return describeLockTag(presentTag(eng, tag), DATABASE_OID);
}

/**
 * Relation OIDs as shown to people: PGlite's own OIDs grow every time the scenario is rebuilt
 * (undo), so they are shifted to start where a fresh cluster's user objects start (16384),
 * keeping DETAIL texts and lock tags identical between a run and its replay.
 */
export function vOid(eng: ModelState, real: number): number {
  return eng.oidBase === null ? real : real - eng.oidBase + FIRST_USER_OID;
}

/** The tag with its relation OID as shown to people (vOid). */
export function presentTag(eng: ModelState, tag: LockTag): LockTag {
  return tag.type === 'relation' || tag.type === 'tuple' ? { ...tag, oid: vOid(eng, tag.oid) } : tag;
}

/** A wait in words with names instead of OIDs: "ExclusiveLock on tuple (0,1) of relation accounts". */
export function friendly(eng: ModelState, tag: LockTag): string {
  switch (tag.type) {
    case 'relation':
      return `relation ${tag.relation}`;
    case 'tuple':
      return `tuple (${tag.block},${tag.offset}) of relation ${tag.relation}`;
    default:
      return describe(eng, tag);
  }
}

/** What the session waits for and on whom, for the UI (undefined when it does not wait). */
export function waitReason(eng: ModelState, s: Sess): WaitReason | undefined {
  const w = s.step?.wait;
  if (!w) return undefined;
  const edges = eng.lm.waitEdges().filter((e) => e.from === s.proc);
  return {
    tag: presentTag(eng, w.tag),
    mode: w.mode,
    description: `${w.mode} on ${friendly(eng, w.tag)}`,
    blockers: edges.map((e) => ({
      session: e.to as string,
      kind: e.kind,
      mode: eng.lm.holders(e.tag).find((h) => h.proc === e.to)?.modes[0] ?? e.mode,
    })),
    sinceMs: w.sinceMs,
  };
}

/** pg_stat_activity.state of the session (plus waiting). */
export function stateOf(eng: ModelState, s: Sess): SessionState {
  if (s.step && !s.step.done) return s.step.wait ? 'waiting' : 'active';
  if (s.txn && !s.txn.implicit) return s.txn.aborted ? 'idle in transaction (aborted)' : 'idle in transaction';
  return 'idle';
}
