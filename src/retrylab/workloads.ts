/**
 * Workloads as data: setup SQL, a transaction template per lock strategy, and an invariant.
 * A template's parameters are drawn once per logical transaction; every retry re-runs the
 * same statements with the same parameters, as the Go code re-runs fn(tx).
 */
import { randInt, randPair, type Rng } from './prng';
import type { LabConfig, StrategyId, WorkloadId } from './types';

/** What a body step sees: the rows of the previous statements of this attempt. */
export interface StepContext {
  results: (string | null)[][][];
}

/** One body statement; null ends the body early with no work done (an empty queue take). */
export type BodyStep = (ctx: StepContext) => string | null;

/** One logical transaction: its body, re-run on each attempt. */
export interface TxPlan {
  steps: BodyStep[];
  /** Human-readable parameters, for the timeline. */
  label: string;
}

/** The invariant's verdict over the final committed state. */
export interface InvariantVerdict {
  holds: boolean;
  detail: string;
}

export interface Workload {
  id: WorkloadId;
  strategies: readonly StrategyId[];
  setup(cfg: LabConfig): string;
  teardown: string;
  plan(cfg: LabConfig, rng: Rng, worker: number, tx: number): TxPlan;
  /** The invariant in one sentence (English; the UI translates by workload id). */
  invariant: string;
  invariantSql: string;
  checkInvariant(rows: (string | null)[][], cfg: LabConfig, nonEmptyCommits: number): InvariantVerdict;
}

const BALANCE = 1000;
const STOCK = 1_000_000;
const fixed =
  (sql: string): BodyStep =>
  () =>
    sql;
const workerName = (w: number) => `w${w + 1}`;

function lockRows(table: string, ids: number[], strategy: StrategyId): BodyStep[] {
  const sorted = [...ids].sort((a, b) => a - b);
  const list = sorted.join(', ');
  const where = sorted.length === 1 ? `id = ${sorted[0]}` : `id IN (${list})`;
  switch (strategy) {
    case 'ordered':
      return [fixed(`SELECT id FROM ${table} WHERE ${where} ORDER BY id FOR UPDATE`)];
    case 'nowait-retry':
      return [fixed(`SELECT id FROM ${table} WHERE ${where} ORDER BY id FOR UPDATE NOWAIT`)];
    case 'advisory':
      return sorted.map((id) => fixed(`SELECT pg_advisory_xact_lock(${id})`));
    default:
      return [];
  }
}

const transfer: Workload = {
  id: 'transfer',
  strategies: ['unordered', 'ordered', 'nowait-retry', 'advisory'],
  setup: (cfg) =>
    `CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL);\n` +
    `INSERT INTO accounts SELECT g, ${BALANCE} FROM generate_series(1, ${Math.max(2, cfg.rows)}) g;`,
  teardown: 'DROP TABLE IF EXISTS accounts;',
  plan(cfg, rng) {
    const [from, to] = randPair(rng, 1, Math.max(2, cfg.rows));
    const amount = randInt(rng, 1, 100);
    return {
      label: `${from}→${to} ${amount}`,
      steps: [
        ...lockRows('accounts', [from, to], cfg.strategy),
        fixed(`UPDATE accounts SET balance = balance - ${amount} WHERE id = ${from}`),
        fixed(`UPDATE accounts SET balance = balance + ${amount} WHERE id = ${to}`),
      ],
    };
  },
  invariant: 'total balance unchanged',
  invariantSql: 'SELECT sum(balance)::text, count(*)::text FROM accounts',
  checkInvariant(rows, cfg) {
    const expected = Math.max(2, cfg.rows) * BALANCE;
    const total = Number(rows[0]?.[0]);
    return { holds: total === expected, detail: `sum(balance) = ${total}, expected ${expected}` };
  },
};

const QUEUE_LOCK: Partial<Record<StrategyId, string>> = {
  ordered: 'FOR UPDATE',
  'skip-locked': 'FOR UPDATE SKIP LOCKED',
  'nowait-retry': 'FOR UPDATE NOWAIT',
};

const queue: Workload = {
  id: 'queue',
  strategies: ['ordered', 'skip-locked', 'nowait-retry'],
  setup: (cfg) =>
    `CREATE TABLE jobs (id int PRIMARY KEY, status text NOT NULL DEFAULT 'queued', taken_by text, takes int NOT NULL DEFAULT 0);\n` +
    `CREATE TABLE job_log (job_id int NOT NULL, worker text NOT NULL);\n` +
    `INSERT INTO jobs (id) SELECT g FROM generate_series(1, ${queueSize(cfg)}) g;`,
  teardown: 'DROP TABLE IF EXISTS jobs, job_log;',
  plan(cfg, _rng, worker) {
    const lock = QUEUE_LOCK[cfg.strategy] ?? 'FOR UPDATE';
    const job = (ctx: StepContext) => ctx.results[0]?.[0]?.[0] ?? null;
    return {
      label: 'take a job',
      steps: [
        fixed(`SELECT id FROM jobs WHERE status = 'queued' ORDER BY id LIMIT 1 ${lock}`),
        (ctx) => {
          const id = job(ctx);
          return id === null
            ? null
            : `UPDATE jobs SET status = 'done', taken_by = '${workerName(worker)}', takes = takes + 1 WHERE id = ${id}`;
        },
        (ctx) => `INSERT INTO job_log VALUES (${job(ctx)}, '${workerName(worker)}')`,
      ],
    };
  },
  invariant: 'no job taken twice',
  invariantSql:
    'SELECT (SELECT count(*) FROM (SELECT job_id FROM job_log GROUP BY job_id HAVING count(*) > 1) d)::text, ' +
    '(SELECT count(*) FROM jobs WHERE takes > 1)::text, (SELECT count(*) FROM job_log)::text',
  checkInvariant(rows, _cfg, nonEmpty) {
    const [dup, multi, logged] = (rows[0] ?? []).map(Number);
    return {
      holds: dup === 0 && multi === 0 && logged === nonEmpty,
      detail: `jobs taken twice: ${dup}, rows with takes > 1: ${multi}, jobs logged: ${logged} of ${nonEmpty} committed takes`,
    };
  },
};

/** The FOR UPDATE queue can come up empty (EvalPlanQual drops a taken job); enough jobs for every take. */
function queueSize(cfg: LabConfig): number {
  return Math.max(cfg.rows, cfg.workers * cfg.transactions);
}

const inventory: Workload = {
  id: 'inventory',
  strategies: ['unordered', 'ordered', 'nowait-retry', 'advisory'],
  setup: (cfg) =>
    `CREATE TABLE items (id int PRIMARY KEY, stock bigint NOT NULL);\n` +
    `CREATE TABLE order_lines (item_id int NOT NULL, qty int NOT NULL, worker text NOT NULL);\n` +
    `INSERT INTO items SELECT g, ${STOCK} FROM generate_series(1, ${Math.max(1, cfg.rows)}) g;`,
  teardown: 'DROP TABLE IF EXISTS items, order_lines;',
  plan(cfg, rng, worker) {
    const n = Math.max(1, cfg.rows);
    const cart = n === 1 ? [1] : randPair(rng, 1, n);
    const qty = cart.map(() => randInt(rng, 1, 3));
    return {
      label: cart.map((id, i) => `${qty[i]}×#${id}`).join(' '),
      steps: [
        ...lockRows('items', cart, cfg.strategy),
        ...cart.flatMap((id, i) => [
          fixed(`UPDATE items SET stock = stock - ${qty[i]} WHERE id = ${id}`),
          fixed(`INSERT INTO order_lines VALUES (${id}, ${qty[i]}, '${workerName(worker)}')`),
        ]),
      ],
    };
  },
  invariant: 'stock + sold = initial stock',
  invariantSql: 'SELECT ((SELECT sum(stock) FROM items) + (SELECT coalesce(sum(qty), 0) FROM order_lines))::text',
  checkInvariant(rows, cfg) {
    const expected = Math.max(1, cfg.rows) * STOCK;
    const total = Number(rows[0]?.[0]);
    return { holds: total === expected, detail: `sum(stock) + sum(qty) = ${total}, expected ${expected}` };
  },
};

const fk: Workload = {
  id: 'fk',
  strategies: ['unordered', 'ordered', 'nowait-retry', 'advisory'],
  setup: (cfg) =>
    `CREATE TABLE parents (id int PRIMARY KEY, children int NOT NULL DEFAULT 0);\n` +
    `CREATE TABLE children (id int PRIMARY KEY, parent_id int NOT NULL REFERENCES parents (id));\n` +
    `INSERT INTO parents (id) SELECT g FROM generate_series(1, ${Math.max(1, cfg.rows)}) g;`,
  teardown: 'DROP TABLE IF EXISTS children, parents;',
  plan(cfg, rng, worker, tx) {
    const p = randInt(rng, 1, Math.max(1, cfg.rows));
    const child = (worker + 1) * 1_000_000 + tx;
    const insert = fixed(`INSERT INTO children VALUES (${child}, ${p})`);
    const update = fixed(`UPDATE parents SET children = children + 1 WHERE id = ${p}`);
    // Naive order: the FK check's KEY SHARE on the parent comes first, FOR UPDATE on it second.
    const steps =
      cfg.strategy === 'unordered'
        ? [insert, fixed(`SELECT children FROM parents WHERE id = ${p} FOR UPDATE`), update]
        : [...lockRows('parents', [p], cfg.strategy), insert, update];
    return { label: `child ${child} of ${p}`, steps };
  },
  invariant: 'every parent counts its children',
  invariantSql:
    'SELECT (SELECT count(*) FROM parents p WHERE p.children <> (SELECT count(*) FROM children c WHERE c.parent_id = p.id))::text, (SELECT count(*) FROM children)::text',
  checkInvariant(rows, _cfg, nonEmpty) {
    const [bad, children] = (rows[0] ?? []).map(Number);
    return {
      holds: bad === 0 && children === nonEmpty,
      detail: `parents with a wrong count: ${bad}, children: ${children} of ${nonEmpty} committed`,
    };
  },
};

/** Every workload, by id. */
export const WORKLOAD_TABLE: Readonly<Record<WorkloadId, Workload>> = { transfer, queue, inventory, fk };

/** The workload for an id, with an early, precise error. */
export function workloadOf(id: string): Workload {
  const w = (WORKLOAD_TABLE as Record<string, Workload | undefined>)[id];
  if (!w) throw new Error(`unknown workload: ${id} (one of ${Object.keys(WORKLOAD_TABLE).join(', ')})`);
  return w;
}
