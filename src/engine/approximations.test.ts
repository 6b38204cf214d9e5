/**
 * The simulator says so on the step when a statement touches something it approximates
 * (docs/engine.md, Limits): each topic is raised by the scenario that touches it, and not by a
 * neighbouring one that does not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from './engine';
import { PgliteExecutor } from './pg/executor';
import type { ApproximationTopic } from './types';

let ex: PgliteExecutor;
beforeAll(async () => {
  ex = await PgliteExecutor.create();
});
afterAll(async () => {
  await ex.close();
});

async function engine(): Promise<Engine> {
  await ex.reset();
  const e = await Engine.create({ sessions: ['s1', 's2'], executor: ex });
  const r = await e.setup(`CREATE TABLE accounts (id int PRIMARY KEY, balance int NOT NULL);
    INSERT INTO accounts VALUES (1, 100), (2, 100), (3, 100);
    CREATE TABLE other (id int);
    INSERT INTO other VALUES (1);
    CREATE TABLE p (id int PRIMARY KEY);
    CREATE TABLE c (pid int REFERENCES p DEFERRABLE INITIALLY DEFERRED);
    CREATE TABLE kid (pid int REFERENCES p);
    CREATE TABLE audited (id int);
    CREATE FUNCTION noop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
    CREATE CONSTRAINT TRIGGER audited_check AFTER INSERT ON audited DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION noop();
    CREATE FUNCTION others() RETURNS bigint VOLATILE LANGUAGE plpgsql AS $$ BEGIN RETURN (SELECT count(*) FROM other); END $$;`);
  expect(r.error).toBeUndefined();
  return e;
}

/** The approximations of the session's last finished step. */
const last = (e: Engine, session: string): ApproximationTopic[] =>
  e
    .snapshot()
    .sessions.find((x) => x.name === session)!
    .history!.at(-1)!.approximations ?? [];

describe('approximation notes', () => {
  it('a temporary table, and SERIALIZABLE DEFERRABLE, are noted on their statements; READ ONLY is modelled', async () => {
    const e = await engine();
    await e.submit('s1', 'BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY DEFERRABLE');
    expect(last(e, 's1')).toEqual(['serializable-read-only']);
    await e.submit('s1', 'ROLLBACK');
    await e.submit('s1', 'BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY');
    expect(last(e, 's1')).toEqual([]);
    await e.submit('s1', 'ROLLBACK');
    await e.submit('s1', 'BEGIN ISOLATION LEVEL SERIALIZABLE');
    expect(last(e, 's1')).toEqual([]);
    await e.submit('s1', 'ROLLBACK');
    await e.submit('s2', 'CREATE TEMP TABLE scratch (a int)');
    expect(last(e, 's2')).toEqual(['temp-table']);
    await e.submit('s2', 'CREATE TABLE plain (a int)');
    expect(last(e, 's2')).toEqual([]);
    const ev = e.snapshot().events.filter((x) => x.type === 'approximation');
    expect(ev.map((x) => x.type === 'approximation' && x.topic)).toEqual(['serializable-read-only', 'temp-table']);
  });

  it('an error raised while a PL/pgSQL EXCEPTION block waits is noted only where the engine cannot raise it in the block', async () => {
    const e = await engine();
    await e.submit(
      's1',
      'CREATE FUNCTION guarded() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; EXCEPTION WHEN others THEN RETURN 0; END $$',
    );
    // No wait, nothing to catch: no note (the block's rows are tracked, spec 155).
    await e.submit('s1', 'SELECT guarded()');
    expect(last(e, 's1')).toEqual([]);
    await e.submit('s2', 'DO $$ BEGIN PERFORM 1; EXCEPTION WHEN others THEN NULL; END $$');
    expect(last(e, 's2')).toEqual([]);
    // A timeout on an advisory lock inside the block: no row to raise it at, so it is shown uncaught, with the note.
    await e.submit('s1', 'SELECT pg_advisory_lock(77)');
    await e.submit('s2', "SET lock_timeout = '100ms'");
    await e.submit('s2', 'DO $$ BEGIN PERFORM pg_advisory_xact_lock(77); EXCEPTION WHEN lock_not_available THEN NULL; END $$');
    await e.advance(200);
    expect(last(e, 's2')).toEqual(['exception-block']);
    // A timeout on a row it updates is raised in the block and caught there: no note, no error.
    await e.submit('s1', 'BEGIN');
    await e.submit('s1', 'UPDATE accounts SET balance = 0 WHERE id = 1');
    await e.submit('s2', 'DO $$ BEGIN UPDATE accounts SET balance = 1 WHERE id = 1; EXCEPTION WHEN lock_not_available THEN NULL; END $$');
    await e.advance(200);
    const s2 = e.snapshot().sessions.find((x) => x.name === 's2')!;
    expect(s2.history!.at(-1)!.error).toBeUndefined();
    expect(last(e, 's2')).toEqual([]);
  });

  it('notices raised before a row wait are sent while the step waits; a recheck on a new version that raised them is noted', async () => {
    const e = await engine();
    await e.submit('s1', 'BEGIN');
    await e.submit('s1', 'UPDATE accounts SET balance = 0 WHERE id = 1');
    await e.submit('s2', 'BEGIN');
    await e.submit('s2', 'UPDATE accounts SET balance = 1 WHERE id = 1');
    await e.submit('s1', 'ROLLBACK');
    expect(last(e, 's2')).toEqual([]);
    await e.submit('s2', 'ROLLBACK');
    // The holder ends without changing the row: the notice went out before the wait, once.
    await e.submit('s1', 'BEGIN');
    await e.submit('s1', 'UPDATE accounts SET balance = 0 WHERE id = 1');
    await e.submit('s2', 'BEGIN');
    await e.submit('s2', "DO $$ BEGIN RAISE NOTICE 'before'; UPDATE accounts SET balance = 1 WHERE id = 1; RAISE NOTICE 'after'; END $$");
    expect(e.statusOf('s2')).toBe('waiting');
    expect(e.stepNotices('s2').map((n) => n.message)).toEqual(['before']);
    await e.submit('s1', 'ROLLBACK');
    expect(last(e, 's2')).toEqual([]);
    expect(e.takeResult('s2')?.notices.map((n) => n.message)).toEqual(['before', 'after']);
    await e.submit('s2', 'ROLLBACK');
    // The holder changed the row: the recheck on its new version raises the WHERE clause's
    // notices again; the re-run's row marks tell them apart (spec 270): nothing to note.
    await e.submit(
      's1',
      "CREATE FUNCTION noisy(int) RETURNS bool LANGUAGE plpgsql AS $$ BEGIN RAISE NOTICE 'row %', $1; RETURN true; END $$",
    );
    await e.submit('s1', 'BEGIN');
    await e.submit('s1', 'UPDATE accounts SET balance = 0 WHERE id = 1');
    await e.submit('s2', 'BEGIN');
    await e.submit('s2', 'UPDATE accounts SET balance = 1 WHERE id = 1 AND noisy(id)');
    expect(e.stepNotices('s2').map((n) => n.message)).toEqual(['row 1']);
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's2')).toEqual([]);
    expect(e.takeResult('s2')?.notices.map((n) => n.message)).toEqual(['row 1', 'row 1']);
  });

  it('COMMIT of a change to a table with a deferred constraint trigger is noted; a deferred foreign key (modelled) is not', async () => {
    const e = await engine();
    await e.submit('s1', 'BEGIN; UPDATE accounts SET balance = 0 WHERE id = 1');
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's1')).toEqual([]);
    await e.submit('s1', 'BEGIN; INSERT INTO p VALUES (1); INSERT INTO c VALUES (1)');
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's1')).toEqual([]);
    await e.submit('s1', 'BEGIN; INSERT INTO audited VALUES (1)');
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's1')).toEqual(['deferred-commit']);
  });

  it('an UPDATE … FROM ONLY re-read after a row it waited for changed is noted; UPDATE … FROM and a single-table one are not', async () => {
    const e = await engine();
    await e.submit('s1', 'BEGIN; UPDATE accounts SET balance = 1 WHERE id = 1');
    expect(await e.submit('s2', 'UPDATE accounts a SET balance = a.balance + 1 FROM ONLY other o WHERE a.id = o.id')).toBe('waiting');
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's2')).toEqual(['join-recheck']);
    // The other table of an UPDATE … FROM is read as the statement's snapshot saw it (initPlans.ts).
    await e.submit('s1', 'BEGIN; UPDATE accounts SET balance = 3 WHERE id = 1');
    expect(await e.submit('s2', 'UPDATE accounts a SET balance = a.balance + 1 FROM other o WHERE a.id = o.id')).toBe('waiting');
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's2')).toEqual([]);
    await e.submit('s1', 'BEGIN; UPDATE accounts SET balance = 2 WHERE id = 1');
    expect(await e.submit('s2', 'UPDATE accounts SET balance = balance + 1 WHERE id = 1')).toBe('waiting');
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's2')).toEqual([]);
  });

  it('a multi-row statement that meets an updated row keeps the scan order and is not noted', async () => {
    const e = await engine();
    const s2 = () =>
      e
        .snapshot()
        .sessions.find((x) => x.name === 's2')!
        .history!.at(-1)!;
    await e.submit('s1', 'BEGIN; UPDATE accounts SET balance = 2 WHERE id = 3');
    expect(await e.submit('s2', 'UPDATE accounts SET balance = balance + 1 RETURNING id')).toBe('waiting');
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's2')).toEqual([]);
    // The updated row 1 is returned where the scan met it (spec 200), not where its new version lies.
    await e.submit('s1', 'BEGIN; UPDATE accounts SET balance = 1 WHERE id = 1');
    expect(await e.submit('s2', 'BEGIN; DELETE FROM accounts WHERE balance < 500 RETURNING id')).toBe('waiting');
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's2')).toEqual([]);
    expect(s2().results.at(-1)!.rows).toEqual([['1'], ['2'], ['3']]);
    await e.submit('s2', 'ROLLBACK');
  });

  it('a multi-row statement with row triggers that meets an updated row is noted: its triggers ran in the re-run order', async () => {
    const e = await engine();
    await e.submit(
      's1',
      `CREATE FUNCTION seen() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO other VALUES (OLD.id); RETURN OLD; END $$;
       CREATE TRIGGER seen AFTER DELETE ON accounts FOR EACH ROW EXECUTE FUNCTION seen()`,
    );
    await e.submit('s1', 'BEGIN; UPDATE accounts SET balance = 1 WHERE id = 1');
    expect(await e.submit('s2', 'DELETE FROM accounts WHERE balance < 500 RETURNING id')).toBe('waiting');
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's2')).toEqual(['recheck-order']);
  });

  it('a foreign-key check that waits first for a lock is noted; one that fails at once is not', async () => {
    const e = await engine();
    expect(await e.submit('s2', 'INSERT INTO kid VALUES (5)')).not.toBe('waiting');
    expect(last(e, 's2')).toEqual([]);
    await e.submit('s1', 'BEGIN; SELECT pg_advisory_xact_lock(7); INSERT INTO p VALUES (5)');
    expect(await e.submit('s2', 'INSERT INTO kid SELECT 5 WHERE pg_advisory_xact_lock(7) IS NOT NULL')).toBe('waiting');
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's2')).toContain('fk-wait-rerun');
    expect(
      e
        .snapshot()
        .sessions.find((x) => x.name === 's2')!
        .history!.at(-1)!.error,
    ).toBeUndefined();
  });

  it('a re-run under the kept snapshot that calls a querying function is noted; a built-in call is not', async () => {
    const e = await engine();
    await e.submit('s1', 'BEGIN; SELECT pg_advisory_xact_lock(8)');
    expect(await e.submit('s2', 'SELECT count(*) FROM other WHERE pg_advisory_xact_lock(8) IS NOT NULL')).toBe('waiting');
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's2')).toEqual([]);
    await e.submit('s1', 'BEGIN; SELECT pg_advisory_xact_lock(8)');
    expect(await e.submit('s2', 'SELECT others() WHERE pg_advisory_xact_lock(8) IS NOT NULL')).toBe('waiting');
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's2')).toEqual(['function-snapshot']);
  });

  it('a row wait in a statement calling a function that locks with NOWAIT or SKIP LOCKED is noted; one calling a plain locker is not', async () => {
    const e = await engine();
    await e.setup(`CREATE FUNCTION lk_nowait(int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN PERFORM 1 FROM accounts WHERE id = $1 FOR UPDATE NOWAIT; RETURN $1; END $$;
      CREATE FUNCTION lk_skip() RETURNS SETOF int LANGUAGE sql AS $$ SELECT id FROM accounts ORDER BY id FOR UPDATE SKIP LOCKED $$;
      CREATE FUNCTION lk_wait(int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN PERFORM 1 FROM accounts WHERE id = $1 FOR UPDATE; RETURN $1; END $$;`);
    await e.submit('s1', 'BEGIN; UPDATE accounts SET balance = 1 WHERE id = 1');
    expect(await e.submit('s2', 'SELECT lk_wait(1)')).toBe('waiting');
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's2')).toEqual([]);
    await e.submit('s1', 'BEGIN; UPDATE accounts SET balance = 2 WHERE id = 1');
    expect(await e.submit('s2', 'SELECT lk_nowait(1)')).toBe('waiting');
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's2')).toEqual(['function-wait-policy']);
    await e.submit('s1', 'BEGIN; UPDATE accounts SET balance = 3 WHERE id = 1');
    expect(await e.submit('s2', 'SELECT lk_skip()')).toBe('waiting');
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's2')).toEqual(['function-wait-policy']);
  });

  it('a row wait of an UPDATE locking through an ordered FOR UPDATE subquery is noted; one without ORDER BY is not', async () => {
    const e = await engine();
    await e.submit('s1', 'BEGIN; SELECT id FROM accounts WHERE id = 2 FOR UPDATE');
    expect(await e.submit('s2', 'UPDATE accounts SET balance = 0 WHERE id IN (SELECT id FROM accounts FOR UPDATE)')).toBe('waiting');
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's2')).toEqual([]);
    await e.submit('s1', 'BEGIN; SELECT id FROM accounts WHERE id = 2 FOR UPDATE');
    expect(await e.submit('s2', 'UPDATE accounts SET balance = 0 WHERE id IN (SELECT id FROM accounts ORDER BY id DESC FOR UPDATE)')).toBe(
      'waiting',
    );
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's2')).toEqual(['subquery-lock-order']);
  });

  it('a table-lock wait in a statement calling a function whose LOCK TABLE says NOWAIT is noted', async () => {
    const e = await engine();
    await e.setup(
      `CREATE FUNCTION lk_table() RETURNS int LANGUAGE plpgsql AS $$ BEGIN LOCK TABLE accounts IN EXCLUSIVE MODE NOWAIT; RETURN 1; END $$;`,
    );
    await e.submit('s1', 'BEGIN; UPDATE accounts SET balance = 1 WHERE id = 1');
    expect(await e.submit('s2', 'SELECT lk_table()')).toBe('waiting');
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's2')).toEqual(['function-wait-policy']);
  });

  it('a recheck of a statement whose function changed the statement’s own new version again is noted; one without is not', async () => {
    const e = await engine();
    await e.setup(
      `CREATE FUNCTION bump() RETURNS bool LANGUAGE sql AS $$ UPDATE accounts SET balance = balance + 1 WHERE id = 1; SELECT true $$;`,
    );
    const twice =
      'WITH u AS (UPDATE accounts SET balance = balance + 10 WHERE id = 1 RETURNING *, bump()) UPDATE accounts a SET balance = u.balance FROM u';
    const once =
      'WITH u AS (UPDATE accounts SET balance = balance + 10 WHERE id = 1 RETURNING *) UPDATE accounts a SET balance = u.balance FROM u';
    await e.submit('s1', 'BEGIN; UPDATE accounts SET balance = 0 WHERE id = 1');
    expect(await e.submit('s2', once)).toBe('waiting');
    await e.submit('s1', 'COMMIT');
    // (The join re-read is noted on both.)
    expect(last(e, 's2')).not.toContain('self-modified-recheck');
    await e.submit('s1', 'BEGIN; UPDATE accounts SET balance = 0 WHERE id = 1');
    expect(await e.submit('s2', twice)).toBe('waiting');
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's2')).toContain('self-modified-recheck');
  });

  it('an exclusion-constrained table changed by an UPDATE on one side is noted; inserts on both sides wait instead', async () => {
    const e = await engine();
    await e.setup(`CREATE TABLE booking (id int PRIMARY KEY, during int4range NOT NULL, EXCLUDE USING gist (during WITH &&));
      INSERT INTO booking VALUES (1, int4range(1, 3));`);
    await e.submit('s1', 'BEGIN; UPDATE booking SET during = int4range(5, 9) WHERE id = 1');
    await e.submit('s2', 'BEGIN');
    await e.submit('s2', 'INSERT INTO accounts VALUES (5, 0)');
    expect(last(e, 's2')).toEqual([]);
    await e.submit('s2', 'INSERT INTO booking VALUES (2, int4range(20, 22))');
    expect(last(e, 's2')).toEqual(['exclusion-constraint']);
    await e.submit('s2', 'ROLLBACK');
    await e.submit('s1', 'ROLLBACK');
    await e.submit('s1', 'BEGIN; INSERT INTO booking VALUES (3, int4range(5, 9))');
    expect(await e.submit('s2', 'INSERT INTO booking VALUES (4, int4range(7, 12))')).toBe('waiting');
    await e.submit('s1', 'ROLLBACK');
    expect(last(e, 's2')).toEqual([]);
  });

  it('nextval in a statement re-formed after a wait for a changed row is noted only when rows came before the waited one', async () => {
    const e = await engine();
    await e.submit('s1', 'CREATE SEQUENCE tick');
    const upd = "UPDATE accounts SET balance = nextval('tick') WHERE id IN (1, 2)";
    // The holder only locked the row: no recheck, the values drawn stand.
    await e.submit('s1', 'BEGIN; SELECT 1 FROM accounts WHERE id = 2 FOR UPDATE');
    expect(await e.submit('s2', upd)).toBe('waiting');
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's2')).toEqual([]);
    // The holder changed the waited row, and row 1 was formed before it.
    await e.submit('s1', 'BEGIN; UPDATE accounts SET balance = 0 WHERE id = 2');
    expect(await e.submit('s2', upd)).toBe('waiting');
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's2')).toEqual(['sequence-recheck']);
    // Only the waited row: it alone is formed again, as in PostgreSQL.
    await e.submit('s1', 'BEGIN; UPDATE accounts SET balance = 0 WHERE id = 3');
    expect(await e.submit('s2', "UPDATE accounts SET balance = nextval('tick') WHERE id = 3")).toBe('waiting');
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's2')).toEqual([]);
  });

  it('a foreign-key check that waited for a referenced row another transaction then deleted is noted; a holder that rolls back is not', async () => {
    const e = await engine();
    await e.submit('s1', 'INSERT INTO p VALUES (1)');
    await e.submit('s2', 'BEGIN; DELETE FROM p WHERE id = 1');
    expect(await e.submit('s1', 'BEGIN; INSERT INTO kid VALUES (1)')).toBe('waiting');
    await e.submit('s2', 'ROLLBACK');
    expect(last(e, 's1')).toEqual([]);
    await e.submit('s1', 'ROLLBACK');
    await e.submit('s2', 'BEGIN; DELETE FROM p WHERE id = 1');
    expect(await e.submit('s1', 'BEGIN; INSERT INTO kid VALUES (1)')).toBe('waiting');
    await e.submit('s2', 'INSERT INTO p VALUES (1); COMMIT');
    expect(last(e, 's1')).toEqual(['fk-check-snapshot']);
    await e.submit('s1', 'ROLLBACK');
  });

  it('an upsert failing with 21000 is noted only while another transaction holds row locks', async () => {
    const e = await engine();
    const upsert = 'INSERT INTO accounts VALUES (1, 5), (1, 6) ON CONFLICT (id) DO UPDATE SET balance = excluded.balance';
    expect(await e.submit('s2', upsert)).toBe('done');
    expect(last(e, 's2')).toEqual([]);
    await e.submit('s1', 'BEGIN; UPDATE accounts SET balance = 0 WHERE id = 1');
    expect(await e.submit('s2', upsert)).toBe('done');
    expect(last(e, 's2')).toEqual(['upsert-cardinality-wait']);
    await e.submit('s1', 'ROLLBACK');
  });

  it('a statement with several data-modifying CTEs is noted when it waits for a row; one CTE is not', async () => {
    const e = await engine();
    await e.submit('s1', 'BEGIN; UPDATE accounts SET balance = 0 WHERE id = 1');
    const one = 'WITH a AS (UPDATE accounts SET balance = 1 WHERE id = 1 RETURNING id) SELECT count(*) FROM a';
    expect(await e.submit('s2', one)).toBe('waiting');
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's2')).toEqual([]);
    await e.submit('s1', 'BEGIN; UPDATE accounts SET balance = 0 WHERE id = 1');
    const two = `WITH a AS (UPDATE accounts SET balance = 2 WHERE id = 2 RETURNING id),
      b AS (UPDATE accounts SET balance = 1 WHERE id = 1 RETURNING id) SELECT (SELECT id FROM a), (SELECT id FROM b)`;
    expect(await e.submit('s2', two)).toBe('waiting');
    await e.submit('s1', 'COMMIT');
    expect(last(e, 's2')).toEqual(['cte-lock-order']);
  });

  it('a MERGE failing with 21000 is noted only while another transaction holds row locks', async () => {
    const e = await engine();
    const merge = `MERGE INTO accounts a USING (VALUES (1), (1)) v(id) ON a.id = v.id
      WHEN MATCHED THEN UPDATE SET balance = a.balance + 1`;
    expect(await e.submit('s2', merge)).toBe('done');
    expect(last(e, 's2')).toEqual([]);
    await e.submit('s1', 'BEGIN; UPDATE accounts SET balance = 0 WHERE id = 1');
    expect(await e.submit('s2', merge)).toBe('done');
    expect(last(e, 's2')).toEqual(['merge-cardinality-wait']);
    await e.submit('s1', 'ROLLBACK');
  });

  it('a multi-row DELETE that waits is noted only when its plan is an Index Scan; an UPDATE is not', async () => {
    const e = await engine();
    await e.submit('s2', 'SET enable_indexscan = off; SET enable_bitmapscan = off');
    await e.submit('s1', 'BEGIN; UPDATE accounts SET balance = 1 WHERE id = 3');
    expect(await e.submit('s2', 'BEGIN; DELETE FROM accounts WHERE id >= 1')).toBe('waiting');
    await e.submit('s1', 'ROLLBACK');
    expect(last(e, 's2')).toEqual([]);
    await e.submit('s2', 'ROLLBACK; RESET enable_indexscan; SET enable_seqscan = off');
    await e.submit('s1', 'BEGIN; UPDATE accounts SET balance = 1 WHERE id = 3');
    expect(await e.submit('s2', 'BEGIN; DELETE FROM accounts WHERE id >= 1')).toBe('waiting');
    await e.submit('s1', 'ROLLBACK');
    expect(last(e, 's2')).toEqual(['index-order']);
    await e.submit('s2', 'ROLLBACK');
    // An UPDATE's rows are put in the order it processed them (inScanOrder).
    await e.submit('s1', 'BEGIN; UPDATE accounts SET balance = 1 WHERE id = 3');
    expect(await e.submit('s2', 'UPDATE accounts SET balance = 0 WHERE id >= 1')).toBe('waiting');
    await e.submit('s1', 'ROLLBACK');
    expect(last(e, 's2')).toEqual([]);
  });
  it('REFRESH MATERIALIZED VIEW is noted in a SERIALIZABLE transaction only', async () => {
    const e = await engine();
    await e.submit('s1', 'CREATE MATERIALIZED VIEW totals AS SELECT sum(balance) AS total FROM accounts');
    await e.submit('s1', 'REFRESH MATERIALIZED VIEW totals');
    expect(last(e, 's1')).toEqual([]);
    await e.submit('s1', 'BEGIN ISOLATION LEVEL SERIALIZABLE');
    await e.submit('s1', 'REFRESH MATERIALIZED VIEW totals');
    expect(last(e, 's1')).toEqual(['matview-serializable']);
    await e.submit('s1', 'COMMIT');
  });
});
