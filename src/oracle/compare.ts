/**
 * Compares two isolationtester traces (expected: usually real PostgreSQL; actual: the simulator)
 * event by event and field by field.
 */
import type { PermutationTrace, TraceEvent } from '../scenario/types';

/** One difference between the traces. `event` is the 0-based event index, when there is one. */
export interface Divergence {
  permutation: string;
  permutationIndex: number;
  event?: number;
  field: string;
  expected: unknown;
  actual: unknown;
  /** A sentence naming the permutation, event, field and both values. */
  description: string;
}

/** The TraceEvent fields, in the order they are compared and reported. */
const FIELDS = [
  'step',
  'session',
  'outcome',
  'sqlstate',
  'message',
  'detail',
  'context',
  'commands',
  'columns',
  'rows',
  'completedAfterStep',
  'notices',
] as const satisfies readonly (keyof TraceEvent)[];

const show = (v: unknown): string => (v === undefined ? '(none)' : JSON.stringify(v));

/**
 * The one part of a CONTEXT line not compared: the tuple position in XactLockTableWait's context
 * ("while locking tuple (0,2) in relation …", "while inserting index tuple (0,4) …"). The
 * simulator's heap is PGlite's, where every rolled-back dry run takes line pointers that the real
 * server's heap never had (and the real server's own aborted inserts take ones PGlite's did not),
 * so a row's physical position can differ; the operation, the relation and the rest of the
 * context are compared. Every other CONTEXT (PL/pgSQL lines, SQL statements of foreign-key
 * checks) is compared exactly.
 */
const TUPLE_POSITION = /\b(tuple) \(\d+,\d+\)( in relation ")/g;

/** A field's value as compared: CONTEXT with the tuple position left out (see TUPLE_POSITION). */
function comparable(field: (typeof FIELDS)[number], v: unknown): string {
  if (field === 'context' && typeof v === 'string') return JSON.stringify(v.replace(TUPLE_POSITION, '$1 (?,?)$2'));
  return JSON.stringify(v);
}

/** A one-line summary of an event, e.g. `s1a (s1) waiting` or `s2b (s2) error 40P01`. */
export function describeEvent(e: TraceEvent | undefined): string {
  if (!e) return '(no event)';
  let s = `${e.step} (${e.session}) ${e.outcome}`;
  if (e.sqlstate) s += ` ${e.sqlstate}`;
  if (e.completedAfterStep) s += ` after ${e.completedAfterStep}`;
  return s;
}

/** Every divergence between expected and actual; empty when they match exactly. */
export function compareTraces(expected: PermutationTrace[], actual: PermutationTrace[]): Divergence[] {
  const out: Divergence[] = [];
  const n = Math.max(expected.length, actual.length);
  for (let p = 0; p < n; p++) {
    const exp = expected[p];
    const act = actual[p];
    const name = exp?.permutation ?? act?.permutation ?? '';
    const at = `permutation ${p + 1} (${name})`;
    if (!exp || !act) {
      out.push({
        permutation: name,
        permutationIndex: p,
        field: 'permutation',
        expected: exp?.permutation,
        actual: act?.permutation,
        description: `${at}: ${exp ? 'missing from actual' : 'unexpected in actual'}`,
      });
      continue;
    }
    if (exp.permutation !== act.permutation) {
      out.push({
        permutation: name,
        permutationIndex: p,
        field: 'permutation',
        expected: exp.permutation,
        actual: act.permutation,
        description: `${at}: permutation expected ${show(exp.permutation)}, actual ${show(act.permutation)}`,
      });
    }
    if (exp.failed !== act.failed) {
      out.push({
        permutation: name,
        permutationIndex: p,
        field: 'failed',
        expected: exp.failed,
        actual: act.failed,
        description: `${at}: ${act.failed !== undefined ? `the simulator failed: ${act.failed}` : `the real server's run failed: ${exp.failed}`}`,
      });
      continue;
    }
    if (JSON.stringify(exp.trailingNotices) !== JSON.stringify(act.trailingNotices)) {
      out.push({
        permutation: name,
        permutationIndex: p,
        field: 'trailingNotices',
        expected: exp.trailingNotices,
        actual: act.trailingNotices,
        description: `${at}: notices after the last step expected ${show(exp.trailingNotices)}, actual ${show(act.trailingNotices)}`,
      });
    }
    const m = Math.max(exp.events.length, act.events.length);
    for (let i = 0; i < m; i++) {
      const e = exp.events[i];
      const a = act.events[i];
      if (!e || !a) {
        out.push({
          permutation: name,
          permutationIndex: p,
          event: i,
          field: 'event',
          expected: e,
          actual: a,
          description: `${at}, event ${i + 1}: expected ${describeEvent(e)}, actual ${describeEvent(a)}`,
        });
        continue;
      }
      for (const field of FIELDS) {
        if (comparable(field, e[field]) === comparable(field, a[field])) continue;
        out.push({
          permutation: name,
          permutationIndex: p,
          event: i,
          field,
          expected: e[field],
          actual: a[field],
          description: `${at}, event ${i + 1} [${describeEvent(e)}]: ${field} expected ${show(e[field])}, ` + `actual ${show(a[field])}`,
        });
      }
    }
  }
  return out;
}

/** The divergences as text, one per line, or "traces match". */
export function formatDivergences(divergences: Divergence[]): string {
  if (divergences.length === 0) return 'traces match';
  return (
    `${divergences.length} divergence${divergences.length === 1 ? '' : 's'}:\n` + divergences.map((d) => `- ${d.description}`).join('\n')
  );
}
