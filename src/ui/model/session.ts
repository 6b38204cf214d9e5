/** Session-pane logic: state keys, icons, wait sentences, the session's part of the script. */
import type { SessionSnapshot, SessionState, WaitReason } from '../../engine/types';
import type { ScriptItem } from '../backend';

/** The state as a data-attribute / CSS-class friendly key. */
export type SessionStateKey = 'idle' | 'active' | 'waiting' | 'idle-in-transaction' | 'aborted';

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

/** A glyph for each state so that colour is never the only cue. */
export const STATE_ICONS: Readonly<Record<SessionStateKey, string>> = {
  idle: '○',
  active: '▶',
  waiting: '◷',
  'idle-in-transaction': '◐',
  aborted: '✖',
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

/** Status of one script line in a pane. */
export type ScriptLineStatus = 'done' | 'running' | 'current' | 'todo';

/** The session's own script items with their status relative to the cursor and the pending step. */
export function sessionScript(
  script: readonly ScriptItem[],
  cursor: number,
  session: SessionSnapshot,
): { item: ScriptItem; status: ScriptLineStatus }[] {
  const runningStep = session.pending?.step;
  let runningMarked = false;
  const mine = script.filter((it) => it.kind === 'step' && it.session === session.name);
  // The pending step is the last done item of this session with that step name.
  let runningIndex = -1;
  if (runningStep) {
    for (const it of mine) if (it.index < cursor && it.step === runningStep) runningIndex = it.index;
  }
  return mine.map((item) => {
    let status: ScriptLineStatus;
    if (item.index === runningIndex && !runningMarked) {
      runningMarked = true;
      status = 'running';
    } else if (item.index < cursor) status = 'done';
    else if (item.index === cursor) status = 'current';
    else status = 'todo';
    return { item, status };
  });
}
