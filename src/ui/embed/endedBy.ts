/** What the embed's compact panes add to the presenter stage's panes (pure). */
import type { SessionSnapshot } from '../../engine/types';
import type { PgMessage } from '../../scenario/types';

const ENDS_TRANSACTION = /^\s*(COMMIT|ROLLBACK|END|ABORT)\b/i;

/**
 * The error that aborted the session's last transaction when only the statement ending that
 * transaction ran after it (a deadlock victim's `COMMIT` answered with `ROLLBACK`): the compact pane
 * shows the last statement only, which would hide the error. Null when the last statement is the
 * error itself (the pane shows it) or when anything else ran after it.
 */
export function endedBy(session: SessionSnapshot): { sql: string; error: PgMessage } | null {
  const history = session.history ?? [];
  for (let i = history.length - 1; i >= 0; i--) {
    const entry = history[i];
    if (entry.error) return i === history.length - 1 ? null : { sql: entry.sql, error: entry.error };
    if (!ENDS_TRANSACTION.test(entry.sql)) return null;
  }
  return null;
}
