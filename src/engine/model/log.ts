/**
 * A session's transaction log as the lock model keeps it: each statement either as SQL text or
 * as row images (what it did to tuples). pg/replay.ts turns a log into replay SQL.
 */
import type { LockMode, LockTag, RowLockMode } from './locks/types';
import type { TupleId } from './rowlocks';
import type { PgMessage } from '../types';

/** A tuple: a committed version (`ctid` is its ctid) or one of the session's own versions (`ctid` holds its version id). */
export interface TupleRef {
  rel: number;
  relation: string;
  ctid: string;
  own: boolean;
}

/** One effect of a statement on a tuple (or an advisory lock it took), replayable without re-running the statement. */
export type ImageOp =
  | { op: 'lock'; target: TupleRef; mode: RowLockMode }
  | { op: 'update'; target: TupleRef; columns: string[]; values: (string | null)[]; newCtid: string }
  | { op: 'delete'; target: TupleRef; moved?: true }
  | { op: 'insert'; rel: number; relation: string; columns: string[]; values: (string | null)[]; newCtid: string }
  | { op: 'advisory'; tag: LockTag & { type: 'advisory' }; mode: LockMode };

/** One entry of a session's transaction log. */
/**
 * An error an EXCEPTION block of a statement caught while it waited, raised again at the row it
 * waited for whenever the statement runs in PGlite (pg/inject.ts).
 */
export interface Injection {
  tuple: TupleId;
  error: PgMessage;
}

/**
 * `setsGucs`: the statement changed a setting (`set_config`, a SET inside a function it called);
 * replayed as SQL it changes it again, so a replay applies the session's SET lists once more after it.
 */
export type LogEntry =
  { kind: 'sql'; sql: string; command: string; setsGucs?: true } | { kind: 'image'; ops: ImageOp[]; command: string; sql: string };
