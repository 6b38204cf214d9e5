/**
 * Sample pastes for the explain page: the course's own two-transfer report (its text, under the
 * default log_line_prefix), a three-process report and a migration's table-lock cycle, laid out
 * as PostgreSQL 18 writes them to stderr.
 */

/** Lines of one report under a prefix; continuation lines keep their tab, as elog.c writes them. */
function prefixed(prefix: string, lines: string[]): string {
  return lines.map((l) => (l.startsWith('\t') ? l : prefix + l)).join('\n');
}

/** The report the course quotes (postgres-deadlocks, "Сообщение в логе PostgreSQL"), with a timestamp and pid prefix. */
export const SAMPLE_TWO_TRANSFERS = prefixed('2026-12-01 10:15:02.345 UTC [1234] ', [
  'ERROR:  deadlock detected',
  'DETAIL:  Process 1234 waits for ShareLock on transaction 5678; blocked by process 5679.',
  '\tProcess 5679 waits for ShareLock on transaction 5680; blocked by process 1234.',
  '\tProcess 1234: UPDATE accounts SET balance = balance - 100 WHERE id = 2;',
  '\tProcess 5679: UPDATE accounts SET balance = balance - 100 WHERE id = 1;',
  'HINT:  See server log for query details.',
  'CONTEXT:  while updating tuple (0,5) in relation "accounts"',
  'STATEMENT:  UPDATE accounts SET balance = balance - 100 WHERE id = 2;',
]);

/** Three sessions each holding one account and wanting the next (the course's "deadlock of three"). */
export const SAMPLE_THREE = prefixed('2026-12-01 10:20:41.118 UTC [301] app@bank ', [
  'ERROR:  deadlock detected',
  'DETAIL:  Process 301 waits for ShareLock on transaction 900; blocked by process 302.',
  '\tProcess 302 waits for ShareLock on transaction 901; blocked by process 303.',
  '\tProcess 303 waits for ShareLock on transaction 899; blocked by process 301.',
  '\tProcess 301: UPDATE accounts SET balance = balance + 1 WHERE id = 2;',
  '\tProcess 302: UPDATE accounts SET balance = balance + 1 WHERE id = 3;',
  '\tProcess 303: UPDATE accounts SET balance = balance + 1 WHERE id = 1;',
  'HINT:  See server log for query details.',
  'CONTEXT:  while updating tuple (0,2) in relation "accounts"',
  'STATEMENT:  UPDATE accounts SET balance = balance + 1 WHERE id = 2;',
]);

/** A migration's ALTER TABLE against a transaction that read the table and then writes to another. */
export const SAMPLE_DDL = prefixed('2026-12-01 10:31:07.502 UTC [402] deploy@bank ', [
  'ERROR:  deadlock detected',
  'DETAIL:  Process 402 waits for AccessExclusiveLock on relation 16385 of database 16384; blocked by process 401.',
  '\tProcess 401 waits for RowExclusiveLock on relation 16390 of database 16384; blocked by process 402.',
  '\tProcess 402: ALTER TABLE accounts ADD COLUMN note text;',
  '\tProcess 401: INSERT INTO audit (id) VALUES (1);',
  'HINT:  See server log for query details.',
  'STATEMENT:  ALTER TABLE accounts ADD COLUMN note text;',
]);
