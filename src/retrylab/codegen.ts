/**
 * Copyable code for the chosen policy and strategy: the course's Go WithRetry (pgx v5) and a
 * TypeScript equivalent (node-postgres), with the workload's transaction as fn(tx).
 */
import type { IsolationLevel, LabConfig, RetryPolicy, StrategyId, WorkloadId } from './types';

/** One statement of the transaction: exec, or the queue's "take one job" query. */
interface CodeStmt {
  sql: string;
  args: string[];
  scanJob?: boolean;
}

interface CodeTx {
  goName: string;
  goParams: string;
  tsName: string;
  tsParams: string;
  /** Lines that normalize parameters before the transaction (Go, TS). */
  go: string[];
  ts: string[];
  stmts: CodeStmt[];
}

const ORDER = { go: ['lo, hi := from, to', 'if lo > hi {', '\tlo, hi = hi, lo', '}'], ts: ['const [lo, hi] = from < to ? [from, to] : [to, from];'] };

function lockStmts(table: string, strategy: StrategyId, keys: [string, string] | [string]): CodeStmt[] {
  const where = keys.length === 2 ? 'id IN ($1, $2)' : 'id = $1';
  switch (strategy) {
    case 'ordered':
      return [{ sql: `SELECT id FROM ${table} WHERE ${where} ORDER BY id FOR UPDATE`, args: keys }];
    case 'nowait-retry':
      return [{ sql: `SELECT id FROM ${table} WHERE ${where} ORDER BY id FOR UPDATE NOWAIT`, args: keys }];
    case 'advisory':
      return keys.map((k) => ({ sql: 'SELECT pg_advisory_xact_lock($1)', args: [k] }));
    default:
      return [];
  }
}

function codeTx(workload: WorkloadId, strategy: StrategyId): CodeTx {
  const ordered = strategy !== 'unordered';
  switch (workload) {
    case 'transfer':
      return {
        goName: 'Transfer',
        goParams: 'from, to int, amount int64',
        tsName: 'transfer',
        tsParams: 'from: number, to: number, amount: number',
        go: ordered ? ORDER.go : [],
        ts: ordered ? ORDER.ts : [],
        stmts: [
          ...lockStmts('accounts', strategy, ['lo', 'hi']),
          { sql: 'UPDATE accounts SET balance = balance - $1 WHERE id = $2', args: ['amount', 'from'] },
          { sql: 'UPDATE accounts SET balance = balance + $1 WHERE id = $2', args: ['amount', 'to'] },
        ],
      };
    case 'inventory':
      return {
        goName: 'PlaceOrder',
        goParams: 'a, b int, qtyA, qtyB int, worker string',
        tsName: 'placeOrder',
        tsParams: 'a: number, b: number, qtyA: number, qtyB: number, worker: string',
        go: ordered ? ['lo, hi := a, b', 'if lo > hi {', '\tlo, hi = hi, lo', '}'] : [],
        ts: ordered ? ['const [lo, hi] = a < b ? [a, b] : [b, a];'] : [],
        stmts: [
          ...lockStmts('items', strategy, ['lo', 'hi']),
          { sql: 'UPDATE items SET stock = stock - $1 WHERE id = $2', args: ['qtyA', 'a'] },
          { sql: 'INSERT INTO order_lines VALUES ($1, $2, $3)', args: ['a', 'qtyA', 'worker'] },
          { sql: 'UPDATE items SET stock = stock - $1 WHERE id = $2', args: ['qtyB', 'b'] },
          { sql: 'INSERT INTO order_lines VALUES ($1, $2, $3)', args: ['b', 'qtyB', 'worker'] },
        ],
      };
    case 'fk': {
      const insert = { sql: 'INSERT INTO children VALUES ($1, $2)', args: ['childID', 'parentID'] };
      const update = { sql: 'UPDATE parents SET children = children + 1 WHERE id = $1', args: ['parentID'] };
      return {
        goName: 'AddChild',
        goParams: 'parentID, childID int',
        tsName: 'addChild',
        tsParams: 'parentID: number, childID: number',
        go: [],
        ts: [],
        stmts: ordered
          ? [...lockStmts('parents', strategy, ['parentID']), insert, update]
          : [insert, { sql: 'SELECT children FROM parents WHERE id = $1 FOR UPDATE', args: ['parentID'] }, update],
      };
    }
    case 'queue': {
      const lock = strategy === 'skip-locked' ? 'FOR UPDATE SKIP LOCKED' : strategy === 'nowait-retry' ? 'FOR UPDATE NOWAIT' : 'FOR UPDATE';
      return {
        goName: 'TakeJob',
        goParams: 'worker string',
        tsName: 'takeJob',
        tsParams: 'worker: string',
        go: [],
        ts: [],
        stmts: [
          { sql: `SELECT id FROM jobs WHERE status = 'queued' ORDER BY id LIMIT 1 ${lock}`, args: [], scanJob: true },
          { sql: "UPDATE jobs SET status = 'done', taken_by = $1, takes = takes + 1 WHERE id = $2", args: ['worker', 'id'] },
          { sql: 'INSERT INTO job_log VALUES ($1, $2)', args: ['id', 'worker'] },
        ],
      };
    }
  }
}

const GO_ISO: Record<IsolationLevel, string> = { 'read committed': 'pgx.ReadCommitted', 'repeatable read': 'pgx.RepeatableRead', serializable: 'pgx.Serializable' };
const CODE_NAMES: Record<string, string> = { '40P01': 'deadlock_detected', '40001': 'serialization_failure', '55P03': 'lock_not_available' };

function goRetryable(p: RetryPolicy): string {
  const codes = p.retryOn.length ? p.retryOn.map((c) => `pgErr.Code == "${c}"`).join(' || ') : 'false';
  return `// isRetryable: ${p.retryOn.map((c) => `${c} (${CODE_NAMES[c]})`).join(', ') || 'nothing'}.
func isRetryable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return ${codes}
	}
	return false
}`;
}

/** The Go (pgx v5) code for the configuration: isRetryable, WithRetry, and the transaction. */
export function goCode(cfg: Pick<LabConfig, 'policy' | 'isolation' | 'workload' | 'strategy'>): string {
  const p = cfg.policy;
  const sleep = p.jitter
    ? `\t\t\t\tbackoff := time.Duration(1<<attempt) * ${p.baseMs} * time.Millisecond
				jitter := time.Duration(rand.Int63n(int64(backoff)))
				select {
				case <-time.After(backoff + jitter):`
    : `\t\t\t\tbackoff := time.Duration(1<<attempt) * ${p.baseMs} * time.Millisecond
				select {
				case <-time.After(backoff):`;
  const commit = p.checkCommit
    ? `\t\tif err := tx.Commit(ctx); err != nil {
			if isRetryable(err) { // the error can come at COMMIT (SERIALIZABLE)
				lastErr = err
				continue
			}
			return err
		}
		return nil`
    : `\t\treturn tx.Commit(ctx)`;
  const t = codeTx(cfg.workload, cfg.strategy);
  const body: string[] = [];
  for (const s of t.stmts) {
    const args = s.args.length ? `, ${s.args.join(', ')}` : '';
    if (s.scanJob) {
      body.push(
        `\t\tvar id int`,
        `\t\terr := tx.QueryRow(ctx, \`${s.sql}\`${args}).Scan(&id)`,
        `\t\tif errors.Is(err, pgx.ErrNoRows) {`,
        `\t\t\treturn nil // nothing to take`,
        `\t\t}`,
        `\t\tif err != nil {`,
        `\t\t\treturn err`,
        `\t\t}`,
      );
    } else body.push(`\t\tif _, err := tx.Exec(ctx, \`${s.sql}\`${args}); err != nil {`, `\t\t\treturn err`, `\t\t}`);
  }
  return `package db

import (
	"context"
	"errors"
${p.jitter ? '\t"math/rand"\n' : ''}	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

${goRetryable(p)}

// WithRetry runs fn in a transaction, retrying on the errors isRetryable accepts.
func WithRetry(ctx context.Context, conn *pgx.Conn, fn func(pgx.Tx) error) error {
	const maxAttempts = ${p.maxAttempts}
	var lastErr error

	for attempt := 0; attempt < maxAttempts; attempt++ {
		tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: ${GO_ISO[cfg.isolation]}})
		if err != nil {
			return err
		}

		err = fn(tx)
		if err != nil {
			_ = tx.Rollback(ctx) // roll back before retrying
			if isRetryable(err) {
				lastErr = err
${sleep}
					continue
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return err // not retryable
		}

${commit}
	}
	return lastErr
}

// ${t.goName}: the lab's transaction (strategy: ${cfg.strategy}).
func ${t.goName}(ctx context.Context, conn *pgx.Conn, ${t.goParams}) error {
${t.go.map((l) => `\t${l}\n`).join('')}	return WithRetry(ctx, conn, func(tx pgx.Tx) error {
${body.join('\n')}
		return nil
	})
}
`;
}

/** The TypeScript (node-postgres) equivalent of goCode. */
export function tsCode(cfg: Pick<LabConfig, 'policy' | 'isolation' | 'workload' | 'strategy'>): string {
  const p = cfg.policy;
  const t = codeTx(cfg.workload, cfg.strategy);
  const body: string[] = [];
  for (const s of t.stmts) {
    const args = s.args.length ? `, [${s.args.join(', ')}]` : '';
    if (s.scanJob) {
      body.push(`    const { rows } = await tx.query(\`${s.sql}\`${args});`, `    if (rows.length === 0) return; // nothing to take`, `    const id: number = rows[0].id;`);
    } else body.push(`    await tx.query(\`${s.sql}\`${args});`);
  }
  const sleep = p.jitter
    ? `const backoff = (1 << attempt) * ${p.baseMs};\n        const jitter = Math.floor(Math.random() * backoff);\n        await sleep(backoff + jitter, signal);`
    : `await sleep((1 << attempt) * ${p.baseMs}, signal);`;
  const commit = p.checkCommit
    ? `    try {
      await client.query('COMMIT');
      return result;
    } catch (err) {
      if (isRetryable(err)) { // the error can come at COMMIT (SERIALIZABLE)
        lastErr = err;
        continue;
      }
      throw err;
    }`
    : `    await client.query('COMMIT');\n    return result;`;
  return `import type { PoolClient } from 'pg';

const RETRYABLE = new Set([${p.retryOn.map((c) => `'${c}'`).join(', ')}]); // ${p.retryOn.map((c) => CODE_NAMES[c]).join(', ')}

function isRetryable(err: unknown): boolean {
  return typeof err === 'object' && err !== null && RETRYABLE.has((err as { code?: string }).code ?? '');
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });
}

/** Runs fn in a transaction, retrying on the errors isRetryable accepts (the course's WithRetry). */
export async function withRetry<T>(client: PoolClient, fn: (tx: PoolClient) => Promise<T>, signal?: AbortSignal): Promise<T> {
  const maxAttempts = ${p.maxAttempts};
  let lastErr: unknown;
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    await client.query('BEGIN ISOLATION LEVEL ${cfg.isolation.toUpperCase()}');
    let result: T;
    try {
      result = await fn(client);
    } catch (err) {
      await client.query('ROLLBACK'); // roll back before retrying
      if (isRetryable(err)) {
        lastErr = err;
        ${sleep}
        continue;
      }
      throw err; // not retryable
    }
${commit}
  }
  throw lastErr;
}

/** The lab's transaction (strategy: ${cfg.strategy}). */
export async function ${t.tsName}(client: PoolClient, ${t.tsParams}): Promise<void> {
${t.ts.map((l) => `  ${l}\n`).join('')}  await withRetry(client, async (tx) => {
${body.join('\n')}
  });
}
`;
}
