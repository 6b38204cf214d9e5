/** The explain page's sentences: explanation data worded in the learner's language (pure). */
import type { Notice } from '../../explain/analyze';
import type { CycleEdge, Explanation } from '../../explain/explain';
import type { LockWaitLine } from '../../explain/parse';
import { edgeLabel } from '../../explain/snapshot';
import type { Messages } from '../i18n';

type Words = Messages['explain'];

/** One edge in plain words, with the CONTEXT's row on the victim's edge. */
export function edgeSentence(t: Words, e: CycleEdge): string {
  const m = e.meaning;
  switch (m.kind) {
    case 'row':
      return (
        (m.insert ? t.edge.insert : t.edge.row)(e.from, e.to) +
        (m.tuple ? t.edge.tuple(m.tuple.block, m.tuple.offset, m.tuple.relation) : '')
      );
    case 'tuple-queue':
      return t.edge.tupleQueue(e.from, e.to, m.block, m.offset, m.relation);
    case 'relation':
      return t.edge.relation(e.from, e.to, e.mode, m.relation, m.table);
    case 'advisory':
      return t.edge.advisory(e.from, e.to, m.key);
    case 'other':
      return t.edge.other(e.from, e.to, e.mode, m.object);
  }
}

/** A notice as a sentence; report numbers are 1-based. */
export function noticeSentence(t: Words, n: Notice): string {
  switch (n.code) {
    case 'empty':
      return t.notice.empty;
    case 'not-a-log':
      return t.notice.notALog(n.lines);
    case 'foreign':
      return t.notice.foreign(t.dbNames[n.db] ?? n.db, n.line);
    case 'client-only':
      return t.notice.clientOnly(n.line);
    case 'cut-before-detail':
      return t.notice.cutBeforeDetail(n.line);
    case 'waits-only':
      return t.notice.waitsOnly(n.count);
    case 'gap': {
      const g = n.gap;
      const k = n.report + 1;
      switch (g.code) {
        case 'no-statements':
          return t.notice.gap['no-statements'](k);
        case 'open-cycle':
          return t.notice.gap['open-cycle'](k, g.pids.join(', '));
        case 'statement-syntax':
          return t.notice.gap['statement-syntax'](k, g.name, g.pid, g.message);
        case 'statement-hidden':
          return t.notice.gap['statement-hidden'](k, g.name, g.pid);
        case 'statement-missing':
          return t.notice.gap['statement-missing'](k, g.name, g.pid);
        case 'statement-params':
          return t.notice.gap['statement-params'](k, g.name, g.pid);
      }
    }
  }
}

/** The likely cause as a sentence. */
export function causeSentence(t: Words, ex: Explanation): string {
  const c = ex.cause;
  const table = c.table ?? '?';
  const keys = c.keys.join(', ');
  switch (c.kind) {
    case 'opposite-order':
      return t.cause[c.kind](table, keys, ex.processes.length);
    case 'upsert-order':
    case 'lock-upgrade':
      return t.cause[c.kind](table, keys);
    case 'fk-parent':
    case 'ddl':
      return t.cause[c.kind](table);
    case 'advisory':
    case 'unknown':
      return t.cause[c.kind]();
  }
}

/** A log_lock_waits line in words. */
export function lockWaitSentence(t: Words, w: LockWaitLine): string {
  return t.lockWait[w.event](w.pid, w.mode, edgeLabel(w).replace(/^\S+ on /, ''), w.afterMs.toFixed(3));
}
