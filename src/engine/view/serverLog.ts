/**
 * The server log, worded and laid out as PostgreSQL 18 writes it with the default
 * log_line_prefix ('%m [%p] ') and log_min_error_statement = error. The timestamp is the virtual
 * clock. Sources: proc.c ProcSleep (log_lock_waits), lock.c LockAcquireExtended
 * (log_lock_failures), deadlock.c DeadLockReport, elog.c send_message_to_server_log (one line
 * per field, continuation lines of a field indented with a tab).
 *
 * Each array element is one field ("LOG:  …", "DETAIL:  …", "STATEMENT:  …"); a multi-line field
 * keeps its newlines.
 */
import type { PgMessage } from '../types';
import { describeLockTag } from '../model/locks/describe';
import type { LockManagerState } from '../model/locks/lockManager';
import { tagKey } from '../model/locks/lockManager';
import type { LockMode, LockTag, ProcId } from '../model/locks/types';

/** One entry's optional fields, in the order elog.c writes them. */
export interface LogFields {
  detail?: string;
  hint?: string;
  context?: string;
  /** The client's whole query string (debug_query_string); written for LOG and ERROR and above. */
  statement?: string;
}

/** `hh:mm:ss.mmm` of the virtual clock, standing in for %m. */
export function logTime(ms: number): string {
  const whole = Math.floor(ms);
  const s = Math.floor(whole / 1000);
  const hh = String(Math.floor(s / 3600)).padStart(2, '0');
  const mm = String(Math.floor((s % 3600) / 60)).padStart(2, '0');
  const ss = String(s % 60).padStart(2, '0');
  return `${hh}:${mm}:${ss}.${String(whole % 1000).padStart(3, '0')}`;
}

/** One log entry: its fields, each prefixed with the time and the pid (elog.c append_with_tabs for continuation lines). */
export function logEntry(atMs: number, pid: number, severity: string, message: string, f: LogFields = {}): string[] {
  const prefix = `${logTime(atMs)} [${pid}] `;
  const tabbed = (text: string) => text.split('\n').join('\n\t');
  const out = [`${prefix}${severity}:  ${tabbed(message)}`];
  if (f.detail !== undefined) out.push(`${prefix}DETAIL:  ${tabbed(f.detail)}`);
  if (f.hint !== undefined) out.push(`${prefix}HINT:  ${tabbed(f.hint)}`);
  if (f.context !== undefined) out.push(`${prefix}CONTEXT:  ${tabbed(f.context)}`);
  if (f.statement !== undefined) out.push(`${prefix}STATEMENT:  ${tabbed(f.statement)}`);
  return out;
}

/** An error or warning as the server logs it; STATEMENT only for ERROR and above (log_min_error_statement = error). */
export function messageEntry(atMs: number, pid: number, m: PgMessage, statement: string | undefined): string[] {
  const message = m.position ? `${m.message} at character ${m.position}` : m.message;
  const withStatement = m.severity === 'ERROR' || m.severity === 'FATAL' || m.severity === 'PANIC';
  return logEntry(atMs, pid, m.severity, message, {
    detail: m.detail,
    hint: m.hint,
    context: m.context,
    statement: withStatement ? statement : undefined,
  });
}

/** proc.c's "%ld.%03d ms" of a wait measured on the virtual clock. */
export function elapsed(ms: number): string {
  return `${Math.max(0, ms).toFixed(3)} ms`;
}

/**
 * proc.c GetLockHoldersAndWaiters: walks lock->procLocks in creation order; a proc whose
 * waitProcLock is this PROCLOCK is a waiter, any other a holder. `notWaiting` is a proc already
 * taken off the queue (the deadlock victim, RemoveFromWaitQueue): it counts as a holder only if
 * its PROCLOCK still holds a mode, else CleanUpLock has removed it.
 */
export function holdersAndWaiters(
  state: Readonly<LockManagerState>,
  tag: LockTag,
  notWaiting?: ProcId,
): { holders: ProcId[]; waiters: ProcId[] } {
  const key = tagKey(tag);
  const lock = state.locks[key];
  const holders: ProcId[] = [];
  const waiters: ProcId[] = [];
  for (const pl of lock?.procLocks ?? []) {
    const held = Object.values(pl.hold).some((n) => (n ?? 0) > 0);
    if (pl.proc === notWaiting) {
      if (held) holders.push(pl.proc);
    } else if (state.waiting[pl.proc] === key) waiters.push(pl.proc);
    else holders.push(pl.proc);
  }
  return { holders, waiters };
}

/** The DETAIL of the log_lock_waits messages ("." after the holders) or of log_lock_failures ("," after them, as PostgreSQL 18 words it). */
export function holdersDetail(holders: number[], waiters: number[], separator: '.' | ','): string {
  const noun = holders.length === 1 ? 'Process holding the lock' : 'Processes holding the lock';
  return `${noun}: ${holders.join(', ')}${separator} Wait queue: ${waiters.join(', ')}.`;
}

/** What happened to a wait that the deadlock check already looked at. */
export type LockWaitEvent = 'still-waiting' | 'acquired' | 'detected-deadlock' | 'avoided-deadlock';

/** The message of one ProcSleep log_lock_waits entry. */
export function lockWaitMessage(event: LockWaitEvent, pid: number, mode: LockMode, lock: string, waitedMs: number): string {
  const after = elapsed(waitedMs);
  switch (event) {
    case 'still-waiting':
      return `process ${pid} still waiting for ${mode} on ${lock} after ${after}`;
    case 'acquired':
      return `process ${pid} acquired ${mode} on ${lock} after ${after}`;
    case 'detected-deadlock':
      return `process ${pid} detected deadlock while waiting for ${mode} on ${lock} after ${after}`;
    case 'avoided-deadlock':
      return `process ${pid} avoided deadlock for ${mode} on ${lock} by rearranging queue order after ${after}`;
  }
}

/** The message of a log_lock_failures entry (a NOWAIT lock that was not available). */
export function lockFailureMessage(pid: number, mode: LockMode, lock: string): string {
  return `process ${pid} could not obtain ${mode} on ${lock}`;
}

/** Shorthand used by the engine: DescribeLockTag with the database OID. */
export function lockName(tag: LockTag, database: number): string {
  return describeLockTag(tag, database);
}
