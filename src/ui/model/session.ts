/** Session-pane logic: state keys, icons, wait sentences, the session's part of the script. */
import type { EngineEvent, FinishedStep, PendingStep, PgMessage, SessionSnapshot, SessionState, WaitReason } from '../../engine/types';
import type { ScriptItem } from '../backend';
import { nameList } from './format';

/** The state as a data-attribute / CSS-class friendly key. */
export type SessionStateKey = 'idle' | 'active' | 'waiting' | 'idle-in-transaction' | 'aborted' | 'terminated';

const STATE_KEYS: Readonly<Record<SessionState, SessionStateKey>> = {
  idle: 'idle',
  active: 'active',
  waiting: 'waiting',
  'idle in transaction': 'idle-in-transaction',
  'idle in transaction (aborted)': 'aborted',
};

/** Maps pg_stat_activity.state (+ 'waiting') to its key; unknown states fail early. */
export function stateKey(state: SessionState): SessionStateKey {
  const key = STATE_KEYS[state];
  if (!key) throw new Error(`unknown session state: ${state}`);
  return key;
}

/** The session's key: `terminated` once the server ended its backend, else its state's key. */
export function sessionKey(session: Pick<SessionSnapshot, 'state' | 'terminated'>): SessionStateKey {
  return session.terminated ? 'terminated' : stateKey(session.state);
}

/** A glyph for each state so that colour is never the only cue. */
export const STATE_ICONS: Readonly<Record<SessionStateKey, string>> = {
  idle: '○',
  active: '▶',
  waiting: '◷',
  'idle-in-transaction': '◐',
  aborted: '✖',
  terminated: '⊗',
};

/** The parts of a wait sentence: what is requested and who blocks it, split by edge kind. */
export interface WaitWords {
  what: string;
  heldBy: string[];
  queuedBehind: string[];
}

/** Splits a wait reason into the words the pane shows ("ShareLock on transaction 745", held by A). */
export function waitWords(reason: WaitReason): WaitWords {
  const uniq = (xs: string[]) => [...new Set(xs)];
  return {
    what: reason.description,
    heldBy: uniq(reason.blockers.filter((b) => b.kind === 'hard').map((b) => b.session)),
    queuedBehind: uniq(reason.blockers.filter((b) => b.kind === 'soft').map((b) => b.session)),
  };
}

/** The pane's wait sentence in the learner's language; `hideHolders` leaves out whom it waits for. */
export function waitSentence(
  w: WaitWords,
  t: { waitsFor: (what: string) => string; heldBy: (s: string) => string; queuedBehind: (s: string) => string },
  hideHolders = false,
): string {
  let text = t.waitsFor(w.what);
  if (hideHolders) return text;
  if (w.heldBy.length) text += ` ${t.heldBy(nameList(w.heldBy))}`;
  if (w.queuedBehind.length) text += `${w.heldBy.length ? ';' : ''} ${t.queuedBehind(nameList(w.queuedBehind))}`;
  return text;
}

/**
 * What became of one script line: not reached yet (`pending`), next to run (`current`), sent and
 * running or sleeping (`running`), blocked on a lock (`waiting`), finished without an error
 * (`ok`), failed (`error`), cancelled — the deadlock victim (40P01) or a cancelled statement
 * (57014) — (`cancelled`), or refused because the transaction was already aborted (`skipped`, 25P02).
 */
export type LineOutcome = 'pending' | 'current' | 'running' | 'waiting' | 'ok' | 'error' | 'cancelled' | 'skipped';

/** One script line of a session with its outcome (and the SQLSTATE when it did not succeed). */
export interface ScriptLine {
  item: ScriptItem;
  outcome: LineOutcome;
  sqlstate?: string;
  /** The server answered a COMMIT with ROLLBACK (the transaction had failed): said on the line. */
  rolledBack?: boolean;
}

/** A glyph for each outcome so that colour is never the only cue. */
export const OUTCOME_ICONS: Readonly<Record<LineOutcome, string>> = {
  pending: ' ',
  current: '▸',
  running: '…',
  waiting: '◷',
  ok: '✓',
  error: '✗',
  cancelled: '⊘',
  skipped: '⤼',
};

/** The outcome a failed step's SQLSTATE means. */
export function failureOutcome(sqlstate: string | undefined): 'error' | 'cancelled' | 'skipped' {
  if (sqlstate === '40P01' || sqlstate === '57014') return 'cancelled';
  if (sqlstate === '25P02') return 'skipped';
  return 'error';
}

/**
 * The session's own script items with their outcomes. The k-th sent occurrence of a step is
 * matched to the session's k-th `step-done` event with that step name, so a failure shows on the
 * line that failed, whatever ran later.
 */
export function sessionScript(
  script: readonly ScriptItem[],
  cursor: number,
  session: SessionSnapshot,
  events: readonly EngineEvent[],
): ScriptLine[] {
  const done = new Map<string, Extract<EngineEvent, { type: 'step-done' }>[]>();
  for (const e of events) {
    if (e.type !== 'step-done' || e.session !== session.name) continue;
    const list = done.get(e.step) ?? [];
    list.push(e);
    done.set(e.step, list);
  }
  const finished = new Map<string, FinishedStep[]>();
  for (const h of session.history ?? []) finished.set(h.step, [...(finished.get(h.step) ?? []), h]);
  const seen = new Map<string, number>();
  const mine = script.filter((it) => it.kind === 'step' && it.session === session.name);
  return mine.map((item): ScriptLine => {
    if (item.index > cursor) return { item, outcome: 'pending' };
    if (item.index === cursor) return { item, outcome: 'current' };
    const name = item.step ?? '';
    const k = seen.get(name) ?? 0;
    seen.set(name, k + 1);
    const end = done.get(name)?.[k];
    if (!end) return { item, outcome: session.pending?.wait ? 'waiting' : 'running' };
    if (end.ok) {
      const tag = finished.get(name)?.[k]?.results.at(-1)?.command;
      return { item, outcome: 'ok', ...(tag === 'ROLLBACK' && !/\brollback\b/i.test(item.sql ?? '') ? { rolledBack: true } : {}) };
    }
    return { item, outcome: failureOutcome(end.sqlstate), ...(end.sqlstate ? { sqlstate: end.sqlstate } : {}) };
  });
}

/** What libpq adds to the error of the command that finds the server gone (psql prints it under the FATAL). */
export const LIBPQ_CONNECTION_CLOSED =
  'server closed the connection unexpectedly\n\tThis probably means the server terminated abnormally\n\tbefore or while processing the request.';

/** One block of a pane's scrollback: a finished or running step, or the server ending the session. */
export type ScrollEntry =
  /** `closed`: the command that read the server's FATAL; libpq then reports the closed connection. */
  | { kind: 'step'; entry: FinishedStep; closed?: boolean }
  | { kind: 'pending'; pending: PendingStep }
  | { kind: 'terminated'; atMs: number; message: PgMessage };

/**
 * The pane's scrollback, oldest first, as psql would have printed it: every finished step with
 * its results, notices and error, the server's FATAL where it ended the session, then the step
 * still running. Snapshots without a history (hand-made fixtures) show their last result.
 */
export function scrollback(session: SessionSnapshot): ScrollEntry[] {
  const steps: FinishedStep[] =
    session.history ??
    (session.last ? [{ ...session.last, sql: session.query, startedMs: session.stateChangeMs, endedMs: session.stateChangeMs }] : []);
  const out: ScrollEntry[] = [];
  const end = session.terminated;
  let endShown = false;
  for (const entry of steps) {
    if (end && !endShown && entry.startedMs > end.atMs) {
      out.push({ kind: 'terminated', atMs: end.atMs, message: end.message });
      endShown = true;
    }
    const closed = !!end && endShown && entry.error?.severity === 'FATAL';
    out.push({ kind: 'step', entry, ...(closed ? { closed } : {}) });
  }
  if (end && !endShown) out.push({ kind: 'terminated', atMs: end.atMs, message: end.message });
  if (session.pending) out.push({ kind: 'pending', pending: session.pending });
  return out;
}
