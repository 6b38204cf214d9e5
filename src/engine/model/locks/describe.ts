/**
 * Human-readable lock descriptions, worded exactly as PostgreSQL words them:
 * lmgr.c DescribeLockTag and deadlock.c DeadLockReport. PostgreSQL prints OIDs, not names,
 * because resolving names would need catalog locks while reporting a deadlock.
 */
import type { DeadlockReport } from './deadlock';
import type { LockTag, ProcId } from './types';

/** SQLSTATE, message and hint of the error DeadLockReport raises (ERRCODE_T_R_DEADLOCK_DETECTED). */
export const DEADLOCK_ERROR = {
  sqlstate: '40P01',
  message: 'deadlock detected',
  hint: 'See server log for query details.',
} as const;

/** C's %u: the value as an unsigned 32-bit integer (advisory keys may be negative ints). */
function u32(n: number): number {
  return n >>> 0;
}

/** lmgr.c DescribeLockTag: "relation 16385 of database 5", "tuple (0,1) of relation 16385 of database 5", "transaction 745", "virtual transaction 3/12", "advisory lock [5,0,1,1]". */
export function describeLockTag(tag: LockTag, database: number): string {
  switch (tag.type) {
    case 'relation': // LOCKTAG_RELATION: field2 = relation OID, field1 = database OID
      return `relation ${u32(tag.oid)} of database ${u32(database)}`;
    case 'tuple': // LOCKTAG_TUPLE: (field3 = block, field4 = offset), field2 = relation, field1 = database
      return `tuple (${u32(tag.block)},${u32(tag.offset)}) of relation ${u32(tag.oid)} of database ${u32(database)}`;
    case 'transactionid': // LOCKTAG_TRANSACTION: "transaction %u"
      return `transaction ${u32(tag.xid)}`;
    case 'virtualxid': // LOCKTAG_VIRTUALTRANSACTION: "virtual transaction %d/%u"
      return `virtual transaction ${tag.vxid}`;
    case 'advisory': // LOCKTAG_ADVISORY: [database, key1, key2, field4]
      return `advisory lock [${u32(database)},${u32(tag.key1)},${u32(tag.key2)},${tag.field4}]`;
  }
}

/** DeadLockReport's DETAIL: lines "Process P1 waits for ShareLock on transaction 745; blocked by process P2." joined with "\n". */
export function deadlockDetail(report: DeadlockReport, pidOf: (p: ProcId) => number, database: number): string {
  return report.edges
    .map(
      (e) =>
        `Process ${pidOf(e.waiter)} waits for ${e.mode} on ${describeLockTag(e.tag, database)}; blocked by process ${pidOf(e.blocker)}.`,
    )
    .join('\n');
}
