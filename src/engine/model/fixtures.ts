/**
 * Hand-made facts for the model's unit tests and fuzz: sessions with a running step, parsed
 * statements reduced to what the model reads (their classification), and acquisition plans.
 */
import type { DryRun, PlanItem } from './facts';
import type { LockMode, RowLockMode } from './locks/types';
import type { TupleId } from './rowlocks';
import { beginTxn } from './txn';
import type { ParsedStatement } from '../sql';
import { addSession, newModelState, sess, type ModelState, type Sess } from '../state';

/** A model state with the named sessions and no transaction open. */
export function world(names: string[] = ['a', 'b', 'c']): ModelState {
  const eng = newModelState();
  names.forEach((n, i) => addSession(eng, n, i));
  return eng;
}

/** The session, in an explicit transaction block (opened if needed), running a fresh step. */
export function running(eng: ModelState, name: string): Sess {
  const s = sess(eng, name);
  s.step = { name: 'step', sql: '', statements: [], idx: 0, results: [], notices: [], startedMs: eng.clock, tupleLocks: [], done: false };
  if (!s.txn) beginTxn(eng, s, false);
  return s;
}

type Dml = Extract<ParsedStatement['cls'], { kind: 'dml' }>;

/** A data-changing statement as the model sees it (its classification only). */
export function dml(over: Partial<Dml> = {}): ParsedStatement {
  const cls: Dml = {
    kind: 'dml',
    waitPolicy: 'block',
    lockNowait: false,
    relations: ['accounts'],
    verb: 'update',
    mentionsAdvisory: false,
    mentionsDiagnostics: false,
    lockingSelect: false,
    ...over,
  };
  return { sql: '', cls };
}

/** The findings of a dry run that took the plan's locks and nothing else. */
export function facts(plan: PlanItem[]): DryRun {
  return { raw: { results: [], notices: [] }, plan, assignsXid: false, inserted: [], sessionAdvisory: null, entry: null };
}

/** Row (block, offset) of table accounts (OID 16384). */
export function tuple(block: number, offset = 1): TupleId {
  return { oid: 16384, relation: 'accounts', block, offset };
}

/** A row lock in the plan. */
export function rowItem(t: TupleId, mode: RowLockMode): PlanItem {
  return { kind: 'row', tuple: t, mode };
}

/** A lock on table accounts in the plan. */
export function relItem(mode: LockMode): PlanItem {
  return { kind: 'rel', tag: { type: 'relation', relation: 'accounts', oid: 16384 }, mode, name: 'accounts' };
}
