/**
 * PostgreSQL's own wording of the errors the engine raises itself (not PGlite), with the
 * SQLSTATE of each. Sources: lock.c/proc.c/deadlock.c, postgres.c (ProcessInterrupts),
 * lmgr.c (XactLockTableWaitErrorCb), heapam.c / nodeLockRows.c, xact.c.
 */
import type { PgMessage } from '../types';

const err = (sqlstate: string, message: string, extra: Partial<PgMessage> = {}): PgMessage => ({
  severity: 'ERROR',
  sqlstate,
  message,
  ...extra,
});

/** Errors and notices by name. */
export const PG = {
  deadlock: (detail: string, context?: string) =>
    err('40P01', 'deadlock detected', { detail, hint: 'See server log for query details.', ...(context ? { context } : {}) }),
  /** A serialization failure raised by SSI (predicate.c); `reason` is the "Reason code" text. */
  serializationRw: (reason: string) =>
    err('40001', 'could not serialize access due to read/write dependencies among transactions', {
      detail: `Reason code: ${reason}`,
      hint: 'The transaction might succeed if retried.',
    }),
  /** heapam_tuple_lock: the row a READ COMMITTED statement waited for went to another partition. */
  movedToOtherPartition: () => err('40001', 'tuple to be locked was already moved to another partition due to concurrent update'),
  lockTimeout: (context?: string) => err('55P03', 'canceling statement due to lock timeout', context ? { context } : {}),
  statementTimeout: (context?: string) => err('57014', 'canceling statement due to statement timeout', context ? { context } : {}),
  /** heap_lock_tuple after a wait for a transaction that updated or deleted the row, under a transaction snapshot (nodeLockRows.c). */
  concurrentUpdate: (context?: string) => err('40001', 'could not serialize access due to concurrent update', context ? { context } : {}),
  userCancel: (context?: string) => err('57014', 'canceling statement due to user request', context ? { context } : {}),
  /** pg_terminate_backend's target (ProcessInterrupts, ProcDiePending). */
  adminTerminate: (): PgMessage => ({
    severity: 'FATAL',
    sqlstate: '57P01',
    message: 'terminating connection due to administrator command',
  }),
  idleInTransactionTimeout: (): PgMessage => ({
    severity: 'FATAL',
    sqlstate: '25P03',
    message: 'terminating connection due to idle-in-transaction timeout',
  }),
  /** libpq's own error for a command on a closed connection: no severity and no SQLSTATE from a server. */
  noConnection: (): PgMessage => ({ severity: '', sqlstate: '', message: 'no connection to the server' }),
  /** _bt_check_unique's duplicate (also unique_key_recheck's, for a deferred constraint): the index and the key as BuildIndexValueDescription prints it. */
  uniqueViolation: (index: string, key: string) =>
    err('23505', `duplicate key value violates unique constraint "${index}"`, { detail: `Key ${key} already exists.` }),
  /** ri_ReportViolation: a referencing row whose key no referenced row has. */
  foreignKeyMissing: (table: string, constraint: string, columns: string[], values: string, referenced: string) =>
    err('23503', `insert or update on table "${table}" violates foreign key constraint "${constraint}"`, {
      detail: `Key (${columns.join(', ')})=(${values}) is not present in table "${referenced}".`,
    }),
  /** ri_ReportViolation on the referenced side (NO ACTION): a key still referenced. */
  foreignKeyReferenced: (table: string, constraint: string, referencing: string, columns: string[], values: string) =>
    err('23503', `update or delete on table "${table}" violates foreign key constraint "${constraint}" on table "${referencing}"`, {
      detail: `Key (${columns.join(', ')})=(${values}) is still referenced from table "${referencing}".`,
    }),
  rowNowait: (relation: string) => err('55P03', `could not obtain lock on row in relation "${relation}"`),
  relationNowait: (relation: string) => err('55P03', `could not obtain lock on relation "${relation}"`),
  inFailedTransaction: () => err('25P02', 'current transaction is aborted, commands ignored until end of transaction block'),
  noSuchSavepoint: (name: string) => err('3B001', `savepoint "${name}" does not exist`),
  /** RequireTransactionBlock's error (SAVEPOINT, RELEASE, ROLLBACK TO, LOCK TABLE). */
  savepointOutsideBlock: (cmd: string) => err('25P01', `${cmd} can only be used in transaction blocks`),
  refusedInBlock: (stmtType: string) => err('25001', `${stmtType} cannot run inside a transaction block`),
  preparedExists: (name: string) => err('42P05', `prepared statement "${name}" already exists`),
  noSuchPrepared: (name: string) => err('26000', `prepared statement "${name}" does not exist`),
  wrongParamCount: (name: string, expected: number, got: number) =>
    err('42601', `wrong number of parameters for prepared statement "${name}"`, {
      detail: `Expected ${expected} parameters but got ${got}.`,
    }),
  setTransactionTooLate: () => err('25001', 'SET TRANSACTION ISOLATION LEVEL must be called before any query'),
  setIsolationInSubtransaction: () => err('25001', 'SET TRANSACTION ISOLATION LEVEL must not be called in a subtransaction'),
  readWriteTooLate: () => err('25001', 'transaction read-write mode must be set before any query'),
  readWriteInSubtransaction: () => err('25001', 'cannot set transaction read-write mode inside a read-only transaction'),
  unsupported: (what: string) =>
    err('0A000', `Lockstep cannot stage ${what}`, {
      detail:
        'The simulator runs every session on one embedded PostgreSQL (PGlite); this statement needs a real server process of its own.',
      hint: 'Remove the statement or run the scenario on a real server with npm run verify.',
    }),
  engine: (message: string) =>
    err('XX000', `Lockstep engine error: ${message}`, { hint: 'The session and its history are intact; the step was not applied.' }),
  warning: (sqlstate: string, message: string): PgMessage => ({ severity: 'WARNING', sqlstate, message }),
};

/** XactLockTableWait's error context for an operation on a tuple (lmgr.c XLTW_Oper). */
export function xactWaitContext(
  verb: 'update' | 'delete' | 'lock' | 'insert' | 'recheck' | 'exclusion',
  block: number,
  offset: number,
  relation: string,
): string {
  const what =
    verb === 'update'
      ? 'while updating tuple'
      : verb === 'delete'
        ? 'while deleting tuple'
        : verb === 'insert'
          ? 'while inserting index tuple'
          : verb === 'recheck'
            ? 'while rechecking updated tuple'
            : verb === 'exclusion'
              ? 'while checking exclusion constraint on tuple'
              : 'while locking tuple';
  return `${what} (${block},${offset}) in relation "${relation}"`;
}
