/** The course's WithRetry decisions, as pure functions of the policy (no clock, no I/O). */
import type { Rng } from './prng';
import type { AttemptOutcome, RetryPolicy } from './types';

/** isRetryable: the error's SQLSTATE is one the policy retries. */
export function isRetryable(policy: RetryPolicy, sqlstate: string | undefined): boolean {
  return sqlstate !== undefined && (policy.retryOn as string[]).includes(sqlstate);
}

/**
 * The sleep after a failed body on 0-based `attempt`: backoff = (1 << attempt) * base,
 * jitter = rand.Int63n(backoff) (uniform in [0, backoff)) when enabled.
 */
export function backoffMs(policy: RetryPolicy, attempt: number, rng: Rng): number {
  const backoff = (1 << attempt) * policy.baseMs;
  const jitter = policy.jitter && backoff > 0 ? Math.floor(rng() * backoff) : 0;
  return backoff + jitter;
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
  return null;
}
