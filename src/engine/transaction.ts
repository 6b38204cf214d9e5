/** Transaction control statements, COMMIT in PGlite, and the end of a transaction. */
import type { EngineContext } from './context';
import { followUpdates, noteMovedRows } from './model/followUpdates';
import { PG } from './model/messages';
import { SsiFailure } from './model/ssi';
import { abortTxnState, beginTxn, commitSubtransactions, endTxnState, releaseDepth } from './model/txn';
import { findLastIndex } from './model/util';
import { maybeVacuum, refreshCatalog } from './pg/catalog';
import { refreshSessionGucs } from './pg/gucs';
import { noteDeferred } from './pg/probes';
import { commitReplay, ident, maybeUnpin, openReplay } from './pg/replay';
import { checkDeferredForeignKeys, checkDeferredKeys, deferrableForeignKeys } from './pg/deferred';
import { constraintDeferred, keysToCheck } from './model/deferred';
import type { Classified } from './sql';
import { queueResumes, type Sess } from './state';
import type { IsolationLevel, PgMessage } from './types';

/** BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE and ROLLBACK TO, with PostgreSQL's warnings and errors. */
export async function execTxnControl(
  eng: EngineContext,
  s: Sess,
  ctl: Extract<Classified, { kind: 'txn' }>['ctl'],
): Promise<'ok' | 'error' | 'wait'> {
  const step = s.step!;
  switch (ctl.kind) {
    case 'begin':
      if (s.txn && !s.txn.implicit) {
        step.notices.push(PG.warning('25001', 'there is already a transaction in progress'));
      } else if (s.txn?.implicit) {
        s.txn.implicit = false;
        if (ctl.isolation) s.txn.isolation = ctl.isolation as IsolationLevel;
        if (ctl.readOnly !== undefined) s.txn.readOnly = ctl.readOnly;
      } else beginTxn(eng, s, false, ctl.isolation, ctl.readOnly);
      step.results.push({ command: ctl.command });
      return 'ok';
    case 'commit': {
      if (!s.txn) {
        step.notices.push(PG.warning('25P01', 'there is no transaction in progress'));
        step.results.push({ command: 'COMMIT' });
        return 'ok';
      }
      if (s.txn.aborted) {
        await endTxn(eng, s, false);
        step.results.push({ command: 'ROLLBACK' });
        return 'ok';
      }
      const err = await commitTxn(eng, s);
      if (err === 'wait') {
        step.deferredWait = 'commit';
        return 'wait';
      }
      if (err) {
        step.error = err;
        return 'error';
      }
      step.results.push({ command: 'COMMIT' });
      return 'ok';
    }
    case 'rollback':
      if (!s.txn) step.notices.push(PG.warning('25P01', 'there is no transaction in progress'));
      else await endTxn(eng, s, false);
      step.results.push({ command: 'ROLLBACK' });
      return 'ok';
    case 'savepoint': {
      if (!s.txn || s.txn.implicit) {
        // PostgreSQL: SAVEPOINT outside a block is an error (inside an implicit block too).
        step.error = PG.savepointOutsideBlock('SAVEPOINT');
        return 'error';
      }
      s.txn.savepoints.push({
        name: ctl.name,
        logLen: s.txn.log.length + 1,
        setsLen: s.txn.sets.length,
        localSetsLen: s.txn.localSets.length,
      });
      s.txn.log.push({ kind: 'sql', sql: `SAVEPOINT ${ident(ctl.name)}`, command: 'SAVEPOINT' });
      step.results.push({ command: 'SAVEPOINT' });
      return 'ok';
    }
    case 'release':
    case 'rollback-to': {
      const cmd = ctl.kind === 'release' ? 'RELEASE' : 'ROLLBACK';
      if (!s.txn || s.txn.implicit) {
        step.error = PG.savepointOutsideBlock(ctl.kind === 'release' ? 'RELEASE SAVEPOINT' : 'ROLLBACK TO SAVEPOINT');
        return 'error';
      }
      const i = findLastIndex(s.txn.savepoints, (p) => p.name === ctl.name);
      if (i < 0) {
        step.error = PG.noSuchSavepoint(ctl.name);
        if (!s.txn.aborted) abortTxnState(eng, s, true);
        return 'error';
      }
      const depth = i + 1;
      if (ctl.kind === 'rollback-to') {
        const sp = s.txn.savepoints[i];
        s.txn.savepoints.length = depth;
        s.txn.log.length = sp.logLen;
        s.txn.aborted = false;
        releaseDepth(eng, s, depth);
        // The subtransaction's SET and SET LOCAL are undone with it (AtEOSubXact_GUC), so the
        // timeouts go back to what they were at the savepoint.
        if (s.txn.sets.length > sp.setsLen || s.txn.localSets.length > sp.localSetsLen) {
          s.txn.sets.length = sp.setsLen;
          s.txn.localSets.length = sp.localSetsLen;
          await refreshSessionGucs(eng, s);
        }
      } else {
        s.txn.savepoints.length = i;
        s.txn.log.push({ kind: 'sql', sql: `RELEASE SAVEPOINT ${ident(ctl.name)}`, command: 'RELEASE' });
        commitSubtransactions(eng, s, i);
      }
      step.results.push({ command: cmd });
      return 'ok';
    }
  }
}

/**
 * Commits for real in PGlite; returns an error if COMMIT fails (the transaction is then rolled
 * back), or 'wait' when a deferred constraint's check waits for another transaction (the step's
 * wait is set, and the wake-up commits again).
 */
export async function commitTxn(eng: EngineContext, s: Sess): Promise<PgMessage | 'wait' | undefined> {
  const txn = s.txn!;
  // SERIALIZABLE: the dangerous-structure check at commit comes before anything is made durable,
  // after the deferred constraints' checks (CommitTransaction fires those first).
  let ssiCommit: (() => void) | undefined;
  const ssiCheck = (): PgMessage | undefined => {
    if (!txn.sx) return undefined;
    try {
      ssiCommit = eng.ssi.preCommit(txn.sx);
    } catch (e) {
      if (!(e instanceof SsiFailure)) throw e;
      return PG.serializationRw(e.reason);
    }
    return undefined;
  };
  const keys = txn.log.length ? keysToCheck(eng.catalog, txn) : [];
  const fks = txn.log.length ? (await deferrableForeignKeys(eng, s)).filter((fk) => constraintDeferred(txn, fk)) : [];
  const checks = keys.length || fks.length;
  if (!checks) {
    const ssiError = ssiCheck();
    if (ssiError) {
      await endTxn(eng, s, false);
      return ssiError;
    }
  }
  if (txn.log.length) {
    await noteDeferred(eng, s);
    const r = await commitReplay(
      eng,
      s,
      checks
        ? async () => (await checkDeferredKeys(eng, s, keys)) ?? (await checkDeferredForeignKeys(eng, s, fks)) ?? ssiCheck()
        : undefined,
    );
    if (r.wait) return 'wait';
    if (r.error !== undefined) {
      await endTxn(eng, s, false);
      return r.error;
    }
    followUpdates(eng, s, r.committed);
    noteMovedRows(eng, s);
    // The catalog changes only when the transaction ran DDL (replayed as SQL text).
    const ddl = txn.log.some((e) => e.kind === 'sql' && !/^(SAVEPOINT|RELEASE|SET CONSTRAINTS)\b/.test(e.command));
    if (ddl) {
      eng.beyondRows = true;
      await refreshCatalog(eng);
    }
    await maybeVacuum(eng);
  }
  ssiCommit?.();
  await endTxn(eng, s, true);
  return undefined;
}

/**
 * SET CONSTRAINTS, once PGlite has run it: the mode holds from now on in the transaction, and
 * IMMEDIATE runs at once the pending checks of the constraints it names (AfterTriggerSetState
 * fires them), which may wait or fail as at COMMIT; a check that passed is not run again.
 * `again`: the wake-up after such a wait.
 */
export async function setConstraints(
  eng: EngineContext,
  s: Sess,
  set: { names: string[] | null; deferred: boolean },
  again = false,
): Promise<'ok' | 'error' | 'wait'> {
  const txn = s.txn;
  if (!txn) return 'ok';
  if (!again) txn.constraintModes.push({ names: set.names, deferred: set.deferred, depth: txn.savepoints.length });
  if (set.deferred) return 'ok';
  const keys = keysToCheck(eng.catalog, txn, set.names);
  const fks = (await deferrableForeignKeys(eng, s)).filter((fk) => set.names === null || set.names.includes(fk.constraint));
  if (!keys.length && !fks.length) return 'ok';
  const opened = await openReplay(eng, s);
  let found: PgMessage | 'wait' | undefined = opened.error;
  if (!found) {
    try {
      found = (await checkDeferredKeys(eng, s, keys)) ?? (await checkDeferredForeignKeys(eng, s, fks, set.names));
    } finally {
      await eng.ex.run('ROLLBACK');
    }
  }
  const step = s.step!;
  if (found === 'wait') {
    step.deferredWait = 'set-constraints';
    return 'wait';
  }
  if (found) {
    step.error ??= found;
    if (s.txn && !s.txn.aborted) abortTxnState(eng, s, true);
    return 'error';
  }
  for (const k of keys) delete k.pending;
  return 'ok';
}

/** Ends the transaction: releases everything in the model (model/txn endTxnState), then what PGlite keeps for it. */
export async function endTxn(eng: EngineContext, s: Sess, committed: boolean): Promise<void> {
  if (!s.txn) return;
  const { woken, hadSets } = endTxnState(eng, s, committed);
  await maybeUnpin(eng);
  queueResumes(eng, woken);
  if (hadSets) await refreshSessionGucs(eng, s);
}
