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

const ORDER = {
  go: ['lo, hi := from, to', 'if lo > hi {', '\tlo, hi = hi, lo', '}'],
  ts: ['const [lo, hi] = from < to ? [from, to] : [to, from];'],
};

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

const GO_ISO: Record<IsolationLevel, string> = {
  'read committed': 'pgx.ReadCommitted',
  'repeatable read': 'pgx.RepeatableRead',
  serializable: 'pgx.Serializable',
};
const CODE_NAMES: Record<string, string> = {
  '40P01': 'deadlock_detected',
  '40001': 'serialization_failure',
  '55P03': 'lock_not_available',
};

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

/** The Go (pgx v5) code for the configuration: isRetryable, RetryPolicy, WithRetry, and the transaction. */
export function goCode(cfg: Pick<LabConfig, 'policy' | 'isolation' | 'workload' | 'strategy'>): string {
  const p = cfg.policy;
  const backoff = p.jitter
    ? `// backoff before run number n+2: half the exponential ceiling is fixed, the
// other half random, so two victims of the same conflict drift apart.
func (p RetryPolicy) backoff(n int) time.Duration {
	ceiling := p.Max
	if n < 30 && p.Base<<n < p.Max {
		ceiling = p.Base << n
	}
	return ceiling/2 + rand.N(ceiling/2+1)
}`
    : `// backoff before run number n+2: the exponential ceiling, no jitter (victims of
// one conflict retry in step and can meet again).
func (p RetryPolicy) backoff(n int) time.Duration {
	if n < 30 && p.Base<<n < p.Max {
		return p.Base << n
	}
	return p.Max
}`;
  const commit = p.checkCommit
    ? `\t// COMMIT can fail too (SERIALIZABLE reports 40001 here): same retry path, same backoff.
	return tx.Commit(ctx)`
    : `\t// COMMIT's error is not retried: %v drops the SQLSTATE, so isRetryable says no.
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %v", err)
	}
	return nil`;
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
	"fmt"
${p.jitter ? '\t"math/rand/v2"\n' : ''}	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

${goRetryable(p)}

// RetryPolicy bounds the retries: a fixed number of attempts and a backoff
// that doubles per attempt up to Max.
type RetryPolicy struct {
	Attempts int           // total runs, the first one included
	Base     time.Duration // backoff ceiling before the second run
	Max      time.Duration // cap for any single backoff
}

var DefaultRetry = RetryPolicy{Attempts: ${p.maxAttempts}, Base: ${p.baseMs} * time.Millisecond, Max: ${p.maxMs} * time.Millisecond}

${backoff}

${
  p.checkCommit
    ? `// WithRetry runs fn inside a transaction and commits it. When any statement,
// or COMMIT itself, fails with a retryable error, the transaction is rolled
// back and the WHOLE of fn runs again after a backoff; no sleep after the last run.`
    : `// WithRetry runs fn inside a transaction and commits it. When a statement fails
// with a retryable error, the transaction is rolled back and the WHOLE of fn runs
// again after a backoff; no sleep after the last run.`
}
func WithRetry(ctx context.Context, conn *pgx.Conn, p RetryPolicy, fn func(pgx.Tx) error) error {
	var err error
	for n := 0; n < p.Attempts; n++ {
		if n > 0 {
			t := time.NewTimer(p.backoff(n - 1))
			select {
			case <-ctx.Done():
				t.Stop()
				return errors.Join(ctx.Err(), err)
			case <-t.C:
			}
		}
		if err = runOnce(ctx, conn, fn); err == nil || !isRetryable(err) {
			return err
		}
	}
	return fmt.Errorf("gave up after %d attempts: %w", p.Attempts, err)
}

func runOnce(ctx context.Context, conn *pgx.Conn, fn func(pgx.Tx) error) error {
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: ${GO_ISO[cfg.isolation]}})
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) // ends an aborted transaction; a no-op after Commit
	if err := fn(tx); err != nil {
		return err
	}
${commit}
}

// ${t.goName}: the lab's transaction (strategy: ${cfg.strategy}).
func ${t.goName}(ctx context.Context, conn *pgx.Conn, ${t.goParams}) error {
${t.go.map((l) => `\t${l}\n`).join('')}	return WithRetry(ctx, conn, DefaultRetry, func(tx pgx.Tx) error {
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
      body.push(
        `    const { rows } = await tx.query(\`${s.sql}\`${args});`,
        `    if (rows.length === 0) return; // nothing to take`,
        `    const id: number = rows[0].id;`,
      );
    } else body.push(`    await tx.query(\`${s.sql}\`${args});`);
  }
  const backoff = p.jitter
    ? `// Half the exponential ceiling fixed, half random, so two victims of one conflict drift apart.
function backoffMs(n: number): number {
  const ceiling = Math.min(BASE_MS * 2 ** n, MAX_MS);
  const half = Math.floor(ceiling / 2);
  return half + Math.floor(Math.random() * (half + 1));
}`
    : `// The exponential ceiling, no jitter.
function backoffMs(n: number): number {
  return Math.min(BASE_MS * 2 ** n, MAX_MS);
}`;
  const commit = p.checkCommit
    ? `  // COMMIT can fail too (SERIALIZABLE reports 40001 here): same retry path, same backoff.
  await client.query('COMMIT');
  return result;`
    : `  try {
    await client.query('COMMIT');
  } catch (err) {
    // COMMIT's error is not retried: the new Error has no code, so isRetryable says no.
    throw new Error(\`commit: \${String(err)}\`);
  }
  return result;`;
  return `import type { PoolClient } from 'pg';

const RETRYABLE = new Set([${p.retryOn.map((c) => `'${c}'`).join(', ')}]); // ${p.retryOn.map((c) => CODE_NAMES[c]).join(', ')}
const ATTEMPTS = ${p.maxAttempts}; // total runs, the first one included
const BASE_MS = ${p.baseMs}; // backoff ceiling before the second run
const MAX_MS = ${p.maxMs}; // cap for any single backoff

function isRetryable(err: unknown): boolean {
  return typeof err === 'object' && err !== null && RETRYABLE.has((err as { code?: string }).code ?? '');
}

${backoff}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });
}

/** Runs fn in a transaction, retrying the whole of it on the errors isRetryable accepts (the course's WithRetry). */
export async function withRetry<T>(client: PoolClient, fn: (tx: PoolClient) => Promise<T>, signal?: AbortSignal): Promise<T> {
  let lastErr: unknown;
  for (let n = 0; n < ATTEMPTS; n++) {
    if (n > 0) await sleep(backoffMs(n - 1), signal); // never after the last run
    try {
      return await runOnce(client, fn);
    } catch (err) {
      if (!isRetryable(err)) throw err;
      lastErr = err;
    }
  }
  throw new Error(\`gave up after \${ATTEMPTS} attempts\`, { cause: lastErr });
}

async function runOnce<T>(client: PoolClient, fn: (tx: PoolClient) => Promise<T>): Promise<T> {
  await client.query('BEGIN ISOLATION LEVEL ${cfg.isolation.toUpperCase()}');
  let result: T;
  try {
    result = await fn(client);
  } catch (err) {
    await client.query('ROLLBACK'); // end the aborted transaction before deciding
    throw err;
  }
${commit}
}

/** The lab's transaction (strategy: ${cfg.strategy}). */
export async function ${t.tsName}(client: PoolClient, ${t.tsParams}): Promise<void> {
${t.ts.map((l) => `  ${l}\n`).join('')}  await withRetry(client, async (tx) => {
${body.join('\n')}
  });
}
`;
}
