import { describe, expect, it } from 'vitest';
import { parseLockObject, parseLog, prefixPid, reportCycle } from './parse';

/** The two-transfer report's lines after the prefix, as PostgreSQL 18 writes them to stderr. */
const BODY = [
  'ERROR:  deadlock detected',
  'DETAIL:  Process 4242 waits for ShareLock on transaction 771; blocked by process 4243.',
  '\tProcess 4243 waits for ShareLock on transaction 770; blocked by process 4242.',
  '\tProcess 4242: UPDATE accounts SET balance = balance + 100 WHERE id = 2;',
  '\tProcess 4243: UPDATE accounts SET balance = balance + 100 WHERE id = 1;',
  'HINT:  See server log for query details.',
  'CONTEXT:  while updating tuple (0,2) in relation "accounts"',
  'STATEMENT:  UPDATE accounts SET balance = balance + 100 WHERE id = 2;',
];

/** The report under a log_line_prefix (continuation lines keep their tab, as elog.c writes them). */
const withPrefix = (prefix: string) => BODY.map((l) => (l.startsWith('\t') ? l : prefix + l)).join('\n');

/** Syslog numbers each line of a message and writes the tab as #011. */
const syslog = BODY.map((l, i) => `Dec  1 10:15:02 db1 postgres[4242]: [5-${i + 1}] ${l.replace(/^\t/, '#011')}`).join('\n');

const EXPECTED = {
  waits: [
    { pid: 4242, mode: 'ShareLock', object: { kind: 'transaction', xid: 771 }, blockedBy: 4243 },
    { pid: 4243, mode: 'ShareLock', object: { kind: 'transaction', xid: 770 }, blockedBy: 4242 },
  ],
  statements: [
    { pid: 4242, sql: 'UPDATE accounts SET balance = balance + 100 WHERE id = 2;' },
    { pid: 4243, sql: 'UPDATE accounts SET balance = balance + 100 WHERE id = 1;' },
  ],
  tuple: { action: 'updating', block: 0, offset: 2, relation: 'accounts' },
  hint: 'See server log for query details.',
};

describe('parseLog: one report under every common log_line_prefix', () => {
  it.each<{ name: string; text: string; who?: object; at?: string }>([
    { name: "default '%m [%p] '", text: withPrefix('2026-12-01 10:15:02.345 UTC [4242] '), at: '2026-12-01 10:15:02.345 UTC' },
    {
      name: "Debian '%m [%p] %q%u@%d '",
      text: withPrefix('2026-12-01 10:15:02.345 UTC [4242] app@bank '),
      who: { user: 'app', database: 'bank' },
    },
    {
      name: "pgBadger '%t [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h '",
      text: withPrefix('2026-12-01 10:15:02 UTC [4242]: [5-1] user=app,db=bank,app=payments,client=10.0.0.7 '),
      who: { user: 'app', database: 'bank', application: 'payments' },
    },
    {
      name: "RDS '%t:%r:%u@%d:[%p]:'",
      text: withPrefix('2026-12-01 10:15:02 UTC:10.0.0.7(51234):app@bank:[4242]:'),
      who: { user: 'app', database: 'bank' },
    },
    { name: "ISO with offset '%m %p '", text: withPrefix('2026-12-01T10:15:02.345+03:00 pid=4242 '), at: '2026-12-01T10:15:02.345+03:00' },
    { name: 'syslog with line numbers and #011', text: syslog },
    { name: 'Windows line ends', text: withPrefix('2026-12-01 10:15:02.345 UTC [4242] ').replace(/\n/g, '\r\n') },
  ])('$name', ({ text, who, at }) => {
    const log = parseLog(text);
    expect(log.reports).toHaveLength(1);
    const [r] = log.reports;
    expect(r).toMatchObject({ ...EXPECTED, victim: 4242, victimFrom: 'prefix', source: 'server', ...(who ?? {}) });
    if (at) expect(r.at).toBe(at);
    expect(r.statement).toBe('UPDATE accounts SET balance = balance + 100 WHERE id = 2;');
    expect(reportCycle(r)).toEqual([4242, 4243]);
    expect(log.usedLines).toBe(log.lines);
    expect(log.bare).toEqual([]);
  });
});

describe('parseLog: other shapes of the report', () => {
  it("reads the course's report (psql layout, indented DETAIL, no prefix): the victim is the first wait line's", () => {
    const text = [
      'ERROR:  deadlock detected',
      'DETAIL:  Process 1234 waits for ShareLock on transaction 5678; blocked by process 5679.',
      '         Process 5679 waits for ShareLock on transaction 5680; blocked by process 1234.',
      '         Process 1234: UPDATE accounts SET balance = balance - 100 WHERE id = 2;',
      '         Process 5679: UPDATE accounts SET balance = balance - 100 WHERE id = 1;',
      'HINT:  See server log for query details.',
      'CONTEXT:  while updating tuple (0,5) in relation "accounts"',
    ].join('\n');
    const [r] = parseLog(text).reports;
    expect(r).toMatchObject({ victim: 1234, victimFrom: 'detail', source: 'server', tuple: { block: 0, offset: 5 } });
    expect(r.statements.map((s) => s.pid)).toEqual([1234, 5679]);
  });

  it('reads the client copy psql prints (DETAIL lines unindented, no statements)', () => {
    const text = BODY.filter((l) => !/Process \d+:|STATEMENT/.test(l))
      .map((l) => l.replace(/^\t/, ''))
      .join('\n');
    const [r] = parseLog(text).reports;
    expect(r.waits).toHaveLength(2);
    expect(r.statements).toEqual([]);
    expect(r.source).toBe('client');
  });

  it("reads JDBC's PSQLException with Detail / Hint / Where", () => {
    const text = [
      'org.postgresql.util.PSQLException: ERROR: deadlock detected',
      '  Detail: Process 4242 waits for ShareLock on transaction 771; blocked by process 4243.',
      'Process 4243 waits for ShareLock on transaction 770; blocked by process 4242.',
      '  Hint: See server log for query details.',
      '  Where: while updating tuple (0,2) in relation "accounts"',
      '\tat org.postgresql.core.v3.QueryExecutorImpl.receiveErrorResponse(QueryExecutorImpl.java:2713)',
    ].join('\n');
    const [r] = parseLog(text).reports;
    expect(r).toMatchObject({ source: 'client', victim: 4242, tuple: { offset: 2 }, hint: 'See server log for query details.' });
    expect(reportCycle(r)).toEqual([4242, 4243]);
  });

  it("reads psycopg's exception text", () => {
    const text = [
      'psycopg2.errors.DeadlockDetected: deadlock detected',
      'DETAIL:  Process 4242 waits for ShareLock on transaction 771; blocked by process 4243.',
      'Process 4243 waits for ShareLock on transaction 770; blocked by process 4242.',
      'HINT:  See server log for query details.',
      'CONTEXT:  while updating tuple (0,2) in relation "accounts"',
    ].join('\n');
    expect(parseLog(text).reports[0]).toMatchObject({ source: 'client', victim: 4242 });
  });

  it('keeps a multi-line statement whole and reads three processes and two reports in one paste', () => {
    const p = '2026-12-01 10:15:02.345 UTC [301] ';
    const q = '2026-12-01 10:16:40.010 UTC [402] ';
    const text = [
      `${p}ERROR:  deadlock detected`,
      `${p}DETAIL:  Process 301 waits for ShareLock on transaction 900; blocked by process 302.`,
      '\tProcess 302 waits for ShareLock on transaction 901; blocked by process 303.',
      '\tProcess 303 waits for ShareLock on transaction 899; blocked by process 301.',
      '\tProcess 301: UPDATE accounts',
      '\t   SET balance = balance + 1',
      '\t WHERE id = 1;',
      '\tProcess 302: UPDATE accounts SET balance = balance + 1 WHERE id = 2;',
      '\tProcess 303: UPDATE accounts SET balance = balance + 1 WHERE id = 3;',
      `${p}HINT:  See server log for query details.`,
      `${p}CONTEXT:  while updating tuple (0,1) in relation "accounts"`,
      '2026-12-01 10:15:03.000 UTC [77] LOG:  checkpoint starting: time',
      `${q}ERROR:  deadlock detected`,
      `${q}DETAIL:  Process 402 waits for AccessExclusiveLock on relation 16385 of database 5; blocked by process 401.`,
      '\tProcess 401 waits for RowExclusiveLock on relation 16390 of database 5; blocked by process 402.',
      '\tProcess 402: ALTER TABLE accounts ADD COLUMN note text;',
      '\tProcess 401: INSERT INTO audit VALUES (1);',
      `${q}HINT:  See server log for query details.`,
    ].join('\n');
    const log = parseLog(text);
    expect(log.reports).toHaveLength(2);
    expect(reportCycle(log.reports[0])).toEqual([301, 302, 303]);
    expect(log.reports[0].statements[0].sql).toBe('UPDATE accounts\nSET balance = balance + 1\nWHERE id = 1;');
    expect(log.reports[1]).toMatchObject({ victim: 402, waits: [{ object: { kind: 'relation', relation: 16385, database: 5 } }, {}] });
    expect(log.usedLines).toBe(log.lines - 1);
  });

  it('reads log_lock_waits lines: still waiting, acquired, detected deadlock, with holders and queue', () => {
    const p = '2026-12-01 10:15:01.345 UTC [4242] ';
    const text = [
      `${p}LOG:  process 4242 still waiting for ShareLock on transaction 771 after 1000.123 ms`,
      `${p}DETAIL:  Process holding the lock: 4243. Wait queue: 4242.`,
      `${p}CONTEXT:  while updating tuple (0,2) in relation "accounts"`,
      `${p}STATEMENT:  UPDATE accounts SET balance = balance + 100 WHERE id = 2;`,
      '2026-12-01 10:15:02.345 UTC [4243] LOG:  process 4243 detected deadlock while waiting for ShareLock on transaction 770 after 1000.050 ms',
      '2026-12-01 10:15:02.346 UTC [4242] LOG:  process 4242 acquired ShareLock on transaction 771 after 2001.000 ms',
      '2026-12-01 10:15:03 UTC [5] LOG:  process 5 still waiting for AccessExclusiveLock on relation 16385 of database 5 after 1000.000 ms',
      '2026-12-01 10:15:03 UTC [5] DETAIL:  Processes holding the lock: 6, 7. Wait queue: 5, 8.',
    ].join('\n');
    const log = parseLog(text);
    expect(log.reports).toEqual([]);
    expect(log.lockWaits.map((w) => [w.pid, w.event, w.mode, w.afterMs, w.holders, w.queue])).toEqual([
      [4242, 'still-waiting', 'ShareLock', 1000.123, [4243], [4242]],
      [4243, 'detected-deadlock', 'ShareLock', 1000.05, [], []],
      [4242, 'acquired', 'ShareLock', 2001, [], []],
      [5, 'still-waiting', 'AccessExclusiveLock', 1000, [6, 7], [5, 8]],
    ]);
    expect(log.lockWaits[0].tuple).toEqual({ action: 'updating', block: 0, offset: 2, relation: 'accounts' });
    expect(log.lockWaits[0].statement).toBe('UPDATE accounts SET balance = balance + 100 WHERE id = 2;');
  });
});

describe('parseLog: what is not a report', () => {
  it.each<{ name: string; text: string; bare?: string[]; foreign?: string[] }>([
    { name: 'pgx one-liner', text: '2026/12/01 10:15:02 transfer 17 failed: ERROR: deadlock detected (SQLSTATE 40P01)', bare: ['client'] },
    { name: 'lib/pq one-liner', text: '2026/12/01 10:15:02 transfer failed: pq: deadlock detected', bare: ['client'] },
    {
      name: 'a server report cut before its DETAIL',
      text: '2026-12-01 10:15:02.345 UTC [4242] ERROR:  deadlock detected',
      bare: ['server'],
    },
    {
      name: 'MySQL',
      text: 'ERROR 1213 (40001): Deadlock found when trying to get lock; try restarting transaction',
      foreign: ['mysql'],
    },
    {
      name: 'SQL Server',
      text: 'Msg 1205, Level 13, State 51, Line 3\nTransaction (Process ID 52) was deadlocked on lock resources with another process and has been chosen as the deadlock victim. Rerun the transaction.',
      foreign: ['sqlserver', 'sqlserver'],
    },
    { name: 'Oracle', text: 'ORA-00060: deadlock detected while waiting for resource', foreign: ['oracle'] },
    { name: 'prose', text: 'hello, my app is slow\nplease help', bare: [], foreign: [] },
    { name: 'empty', text: '   \n', bare: [], foreign: [] },
  ])('$name', ({ text, bare = [], foreign = [] }) => {
    const log = parseLog(text);
    expect(log.reports).toEqual([]);
    expect(log.bare.map((b) => b.source)).toEqual(bare);
    expect(log.foreign.map((f) => f.db)).toEqual(foreign);
  });

  it('a report whose wait lines do not close (cut in the middle) has no cycle', () => {
    const text = withPrefix('2026-12-01 10:15:02.345 UTC [4242] ').split('\n').slice(0, 2).join('\n');
    const [r] = parseLog(text).reports;
    expect(r.waits).toHaveLength(1);
    expect(reportCycle(r)).toBeNull();
  });
});

describe('lock objects and prefixes', () => {
  it.each([
    ['transaction 745', { kind: 'transaction', xid: 745 }],
    ['virtual transaction 3/12', { kind: 'virtualxid', vxid: '3/12' }],
    ['relation 16385 of database 5', { kind: 'relation', relation: 16385, database: 5 }],
    ['tuple (0,1) of relation 16385 of database 5', { kind: 'tuple', block: 0, offset: 1, relation: 16385, database: 5 }],
    ['advisory lock [5,0,42,1]', { kind: 'advisory', database: 5, key1: 0, key2: 42, field4: 1 }],
    ['extension of relation 16385 of database 5', { kind: 'extend', relation: 16385, database: 5 }],
    ['speculative token 3 of transaction 9', { kind: 'speculative', token: 3, xid: 9 }],
    ['something new', { kind: 'object', text: 'something new' }],
  ])('%s', (text, expected) => {
    expect(parseLockObject(text)).toEqual(expected);
  });

  it.each([
    ['2026-12-01 10:15:02.345 UTC [4242] ', 4242],
    ['2026-12-01 10:15:02 UTC [4242]: [5-1] user=app,db=bank ', 4242],
    ['Dec  1 10:15:02 db1 postgres[4242]: [5-1] ', 4242],
    ['2026-12-01 10:15:02 UTC:10.0.0.7(51234):app@bank:[4242]:', 4242],
    ['pid=4242 ', 4242],
    ['2026/12/01 10:15:02 transfer failed: ', null],
  ])('pid of %j', (prefix, pid) => {
    expect(prefixPid(prefix)).toBe(pid);
  });
});
