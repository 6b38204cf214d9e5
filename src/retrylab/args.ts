/** Command-line options of `npm run lab` → a LabConfig (pure, so it is testable). */
import { parseArgs } from 'node:util';
import { policyProblem } from './policy';
import {
  coursePolicyFor,
  DEFAULT_CONFIG,
  ISOLATION_LEVELS,
  RETRYABLE_CODES,
  STRATEGIES,
  WORKLOADS,
  type LabConfig,
  type RetryableCode,
} from './types';
import { workloadOf } from './workloads';

export const LAB_USAGE = `usage: npm run lab -- --workload transfer|queue|inventory|fk --strategy ${STRATEGIES.join('|')}
  [--workers N] [--transactions M] [--seed S] [--accounts K | --rows K] [--think MS]
  [--isolation "read committed"|"repeatable read"|serializable]
  [--retry-on 40P01,40001[,55P03]] [--max-attempts 5] [--base-ms 100] [--max-ms 2000] [--no-jitter] [--no-check-commit]
  [--deadlock-timeout MS] [--lock-timeout MS] [--json] [--code go|ts] [--progress]`;

export interface LabCli {
  config: LabConfig;
  json: boolean;
  code: 'go' | 'ts' | null;
  progress: boolean;
}

function int(name: string, v: string | undefined, fallback: number, lo: number, hi: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < lo || n > hi) throw new Error(`--${name} must be an integer from ${lo} to ${hi}, got ${v}`);
  return n;
}

/** Parses argv (without node and the script); throws an Error with a precise message. */
export function parseLabArgs(argv: string[]): LabCli {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      workload: { type: 'string' },
      strategy: { type: 'string' },
      workers: { type: 'string' },
      transactions: { type: 'string' },
      seed: { type: 'string' },
      accounts: { type: 'string' },
      rows: { type: 'string' },
      think: { type: 'string' },
      isolation: { type: 'string' },
      'retry-on': { type: 'string' },
      'max-attempts': { type: 'string' },
      'base-ms': { type: 'string' },
      'max-ms': { type: 'string' },
      'no-jitter': { type: 'boolean' },
      'no-check-commit': { type: 'boolean' },
      'deadlock-timeout': { type: 'string' },
      'lock-timeout': { type: 'string' },
      json: { type: 'boolean' },
      code: { type: 'string' },
      progress: { type: 'boolean' },
    },
  });
  const d = DEFAULT_CONFIG;
  const workload = values.workload ?? d.workload;
  if (!(WORKLOADS as readonly string[]).includes(workload))
    throw new Error(`unknown workload: ${workload} (one of ${WORKLOADS.join(', ')})`);
  const strategy = values.strategy ?? workloadOf(workload).strategies[0];
  if (!(STRATEGIES as readonly string[]).includes(strategy))
    throw new Error(`unknown strategy: ${strategy} (one of ${STRATEGIES.join(', ')})`);
  const isolation = (values.isolation ?? d.isolation).toLowerCase();
  if (!(ISOLATION_LEVELS as readonly string[]).includes(isolation)) throw new Error(`unknown isolation level: ${isolation}`);
  // The course's list for the strategy (NOWAIT + retry adds 55P03) unless the list was given explicitly.
  const retryOn =
    values['retry-on'] !== undefined
      ? values['retry-on']
          .split(',')
          .map((s) => s.trim().toUpperCase())
          .filter(Boolean)
      : coursePolicyFor(strategy as LabConfig['strategy']).retryOn;
  for (const c of retryOn)
    if (!(RETRYABLE_CODES as readonly string[]).includes(c))
      throw new Error(`--retry-on: ${c} is not one of ${RETRYABLE_CODES.join(', ')}`);
  const baseMs = int('base-ms', values['base-ms'], d.policy.baseMs, 0, 10_000);
  const policy = {
    retryOn: retryOn as RetryableCode[],
    maxAttempts: int('max-attempts', values['max-attempts'], d.policy.maxAttempts, 1, 20),
    baseMs,
    // A base above the default cap raises the cap with it unless --max-ms is given.
    maxMs: int('max-ms', values['max-ms'], Math.max(d.policy.maxMs, baseMs), 0, 60_000),
    jitter: !values['no-jitter'],
    checkCommit: !values['no-check-commit'],
  };
  const problem = policyProblem(policy);
  if (problem) throw new Error(problem);
  const code = values.code ?? null;
  if (code !== null && code !== 'go' && code !== 'ts') throw new Error(`--code must be go or ts`);
  const config: LabConfig = {
    workload: workload as LabConfig['workload'],
    strategy: strategy as LabConfig['strategy'],
    isolation: isolation as LabConfig['isolation'],
    policy,
    workers: int('workers', values.workers, d.workers, 1, 8),
    transactions: int('transactions', values.transactions, d.transactions, 1, 100_000),
    rows: int('rows', values.rows ?? values.accounts, d.rows, 1, 100_000),
    thinkMs: int('think', values.think, d.thinkMs, 0, 60_000),
    seed: int('seed', values.seed, d.seed, 0, 2 ** 32 - 1),
    deadlockTimeoutMs: int('deadlock-timeout', values['deadlock-timeout'], d.deadlockTimeoutMs, 1, 600_000),
    lockTimeoutMs: int('lock-timeout', values['lock-timeout'], d.lockTimeoutMs, 0, 600_000),
  };
  return { config, json: !!values.json, code, progress: !!values.progress };
}
