import pg from 'pg';
import { startPostgres } from '/work/wt/lessons/src/oracle/server';
const lines: string[] = [];
const server = await startPostgres({ onLog: (l) => lines.push(l), settings: { log_lock_waits: 'on', log_lock_failures: 'on' } });
const c = async () => { const x = new pg.Client(server.url); await x.connect(); x.on('error', () => {}); return x; };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
try {
  const a = await c(), b = await c(), d = await c();
  console.log('pids', (await a.query('select pg_backend_pid() p')).rows[0].p, (await b.query('select pg_backend_pid() p')).rows[0].p, (await d.query('select pg_backend_pid() p')).rows[0].p);
  await a.query('create table t (id int primary key, v int); insert into t values (1,0)');
  lines.push('=== lock table nowait');
  await a.query('begin'); await a.query('lock table t in share mode');
  await b.query('begin'); console.log(await b.query('lock table t in access exclusive mode nowait').catch((e) => e.message)); await b.query('rollback');
  await a.query('commit');
  lines.push('=== row nowait with tuple lock held by a waiter');
  await a.query('begin'); await a.query('select * from t where id=1 for update');
  const pb = b.query('update t set v=1 where id=1');
  await sleep(300);
  await d.query('begin'); console.log(await d.query('select * from t where id=1 for update nowait').catch((e) => e.message)); await d.query('rollback');
  await a.query('commit'); await pb; await sleep(200);
  for (const x of [a, b, d]) await x.end();
} finally { await server.stop(); }
console.log(lines.filter((l) => /===|LOG:  process|DETAIL|ERROR/.test(l)).join('\n'));
