import { describe, expect, it } from 'vitest';
import { elapsed, holdersAndWaiters, holdersDetail, logEntry, lockWaitMessage, messageEntry } from './serverLog';
import { LockManager } from '../model/locks/lockManager';
import type { LockTag, ProcId } from '../model/locks/types';

describe('server log format', () => {
  it('words the holders DETAIL as proc.c does, singular and plural, and log_lock_failures with its comma', () => {
    expect(holdersDetail([10816], [10817], '.')).toBe('Process holding the lock: 10816. Wait queue: 10817.');
    expect(holdersDetail([1, 2], [], '.')).toBe('Processes holding the lock: 1, 2. Wait queue: .');
    expect(holdersDetail([7], [], ',')).toBe('Process holding the lock: 7, Wait queue: .');
  });

  it('prints waits as "%ld.%03d ms" and indents continuation lines with a tab', () => {
    expect(elapsed(2506.192)).toBe('2506.192 ms');
    expect(lockWaitMessage('still-waiting', 5, 'ShareLock', 'transaction 755', 1000)).toBe(
      'process 5 still waiting for ShareLock on transaction 755 after 1000.000 ms',
    );
    expect(logEntry(1500, 9, 'ERROR', 'deadlock detected', { detail: 'a\nb', statement: 'SELECT 1' })).toEqual([
      '00:00:01.500 [9] ERROR:  deadlock detected',
      '00:00:01.500 [9] DETAIL:  a\n\tb',
      '00:00:01.500 [9] STATEMENT:  SELECT 1',
    ]);
  });

  it('writes STATEMENT for errors but not for warnings (log_min_error_statement = error), and the position', () => {
    expect(messageEntry(0, 1, { severity: 'WARNING', sqlstate: '25P01', message: 'w' }, 'Q')).toEqual(['00:00:00.000 [1] WARNING:  w']);
    expect(messageEntry(0, 1, { severity: 'ERROR', sqlstate: '55P03', message: 'e', position: 8 }, 'Q')).toEqual([
      '00:00:00.000 [1] ERROR:  e at character 8',
      '00:00:00.000 [1] STATEMENT:  Q',
    ]);
  });

  it('lists holders and waiters in lock->procLocks order, a waiter by its queued request', () => {
    const lm = new LockManager();
    const tag: LockTag = { type: 'relation', relation: 't', oid: 16384 };
    const [a, b, c] = ['A', 'B', 'C'] as ProcId[];
    lm.acquire(a, tag, 'AccessShareLock');
    expect(lm.acquire(b, tag, 'AccessExclusiveLock').status).toBe('waiting');
    lm.acquire(c, tag, 'AccessShareLock'); // queues behind B's conflicting request
    expect(holdersAndWaiters(lm.raw, tag)).toEqual({ holders: [a], waiters: [b, c] });
  });
});
