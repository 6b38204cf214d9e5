/** The course's WithRetry decisions, as pure functions of the policy (no clock, no I/O). */
import type { Rng } from './prng';
import type { AttemptOutcome, RetryPolicy } from './types';

/** isRetryable: the error's SQLSTATE is one the policy retries. */
export function isRetryable(policy: RetryPolicy, sqlstate: string | undefined): boolean {
  return sqlstate !== undefined && (policy.retryOn as string[]).includes(sqlstate);
}

/** The backoff ceiling after failed run `attempt` (0-based): min(baseMs << attempt, maxMs). */
export function backoffCeilingMs(policy: RetryPolicy, attempt: number): number {
  return Math.min(policy.baseMs * 2 ** attempt, policy.maxMs);
}

/**
 * The sleep after failed run `attempt` (0-based), as the lesson's RetryPolicy.backoff:
 * ceiling/2 + rand.N(ceiling/2 + 1) with jitter (half fixed, half random), the ceiling without.
 * The caller sleeps only when another run follows.
 */
export function backoffMs(policy: RetryPolicy, attempt: number, rng: Rng): number {
  const ceiling = backoffCeilingMs(policy, attempt);
  if (!policy.jitter) return ceiling;
  const half = Math.floor(ceiling / 2);
  return half + Math.floor(rng() * (half + 1));
}

/** Whether failed run `attempt` (0-based) is followed by another: the cap on attempts. */
export function hasNextAttempt(policy: RetryPolicy, attempt: number): boolean {
  return attempt + 1 < policy.maxAttempts;
}

/** How an error's SQLSTATE is counted. */
export function outcomeOf(sqlstate: string | undefined): AttemptOutcome {
  switch (sqlstate) {
    case '40P01':
      return 'deadlock';
    case '40001':
      return 'serialization';
    case '55P03':
      return 'lock-not-available';
    default:
      return 'error';
  }
}

/** Checks a policy and says what is wrong, or null. */
export function policyProblem(p: RetryPolicy): string | null {
  if (!Number.isInteger(p.maxAttempts) || p.maxAttempts < 1 || p.maxAttempts > 20) return 'maxAttempts must be an integer from 1 to 20';
  if (!(p.baseMs >= 0 && p.baseMs <= 10_000)) return 'baseMs must be from 0 to 10000';
  if (!(p.maxMs >= p.baseMs && p.maxMs <= 60_000)) return 'maxMs must be from baseMs to 60000';
  return null;
}
