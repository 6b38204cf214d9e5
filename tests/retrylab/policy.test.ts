/**
 * The lab runs the retry-backoff lesson's WithRetry: capped exponential backoff, half of it
 * random, never after the last run, and the same backoff after a failed COMMIT.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgliteExecutor } from '../../src/engine';
import { goCode, tsCode } from '../../src/retrylab/codegen';
import { backoffCeilingMs, backoffMs, hasNextAttempt } from '../../src/retrylab/policy';
import { createRng } from '../../src/retrylab/prng';
import { runLab } from '../../src/retrylab/runner';
import { COURSE_POLICY, DEFAULT_CONFIG, coursePolicyFor, type LabConfig, type LabResult } from '../../src/retrylab/types';

let ex: PgliteExecutor;
beforeAll(async () => {
  ex = await PgliteExecutor.create();
});
afterAll(async () => ex?.close());

describe('backoff (the lesson: ceiling = min(Base << n, Max), ceiling/2 + rand[0, ceiling/2])', () => {
  it('the course policy is the lesson DefaultRetry', () => {
    expect(COURSE_POLICY).toEqual({
      retryOn: ['40P01', '40001'],
      maxAttempts: 5,
      baseMs: 100,
      maxMs: 2000,
      jitter: true,
      checkCommit: true,
    });
    expect(coursePolicyFor('nowait-retry').retryOn).toEqual(['40P01', '40001', '55P03']);
    expect(coursePolicyFor('ordered').retryOn).toEqual(['40P01', '40001']);
  });

  it.each([
    [0, 100],
    [1, 200],
    [3, 800],
    [4, 1600],
    [5, 2000],
    [12, 2000],
  ])('ceiling after run %i is %i ms; without jitter the sleep is the ceiling', (n, ceiling) => {
    expect(backoffCeilingMs(COURSE_POLICY, n)).toBe(ceiling);
    expect(backoffMs({ ...COURSE_POLICY, jitter: false }, n, createRng(1))).toBe(ceiling);
  });

  it('with jitter the sleep covers [ceiling/2, ceiling], seeded', () => {
    for (let n = 0; n < 7; n++) {
      const rng = createRng(5 + n);
      const c = backoffCeilingMs(COURSE_POLICY, n);
      const seen = Array.from({ length: 400 }, () => backoffMs(COURSE_POLICY, n, rng));
      expect(Math.min(...seen)).toBeGreaterThanOrEqual(c / 2);
      expect(Math.max(...seen)).toBeLessThanOrEqual(c);
      // Both halves of the random range occur: the jitter is not a constant offset.
      expect(seen.some((ms) => ms < (3 * c) / 4)).toBe(true);
      expect(seen.some((ms) => ms > (3 * c) / 4)).toBe(true);
    }
    const a = createRng(9);
    const b = createRng(9);
    expect([0, 1, 2].map((n) => backoffMs(COURSE_POLICY, n, a))).toEqual([0, 1, 2].map((n) => backoffMs(COURSE_POLICY, n, b)));
  });

  it('the attempt cap counts the first run', () => {
    expect(hasNextAttempt(COURSE_POLICY, 3)).toBe(true);
    expect(hasNextAttempt(COURSE_POLICY, 4)).toBe(false);
    expect(hasNextAttempt({ ...COURSE_POLICY, maxAttempts: 1 }, 0)).toBe(false);
  });
});

/** The statements a worker sent, in order. */
const sentBy = (r: LabResult, worker: number) => r.schedule!.filter((s) => s.worker === worker);

/** For each failed attempt: the statement that failed, and the worker's next statement. */
function failures(r: LabResult) {
  const out: { worker: number; attempt: number; sql: string; backoff?: number; endMs: number; next?: { sql: string; atMs: number } }[] = [];
  for (const a of r.timeline) {
    if (a.outcome === 'commit') continue;
    const mine = sentBy(r, a.worker);
    const i = mine.findIndex((s) => s.outcome === 'error' && s.atMs <= a.endMs && s.atMs >= a.startMs && s.sqlstate === a.sqlstate);
    const failed = mine[i];
    // A failed body is followed by its ROLLBACK; a failed COMMIT ends the transaction itself.
    const after = mine.slice(i + 1).find((s) => s.sql !== 'ROLLBACK');
    out.push({
      worker: a.worker,
      attempt: a.attempt,
      sql: failed.sql,
      backoff: a.backoffMs,
      endMs: a.endMs,
      next: after && { sql: after.sql, atMs: after.atMs },
    });
  }
  return out;
}

describe('the runner follows the policy', () => {
  it('a 40001 at COMMIT is retried after the same backoff as a failed statement', { timeout: 120_000 }, async () => {
    const policy = { ...COURSE_POLICY, jitter: false };
    const c: LabConfig = {
      ...DEFAULT_CONFIG,
      workload: 'queue',
      strategy: 'skip-locked',
      isolation: 'serializable',
      workers: 4,
      transactions: 5,
      rows: 3,
      policy,
    };
    const r = await runLab(c, { executor: ex, recordSchedule: true });
    const atCommit = failures(r).filter((f) => f.sql === 'COMMIT');
    expect(atCommit.length).toBeGreaterThan(0);
    for (const f of atCommit) {
      expect(f.backoff).toBe(backoffCeilingMs(policy, f.attempt));
      expect(f.next?.sql).toMatch(/^BEGIN/);
      expect(f.next!.atMs).toBeGreaterThanOrEqual(f.endMs + f.backoff!);
    }
    expect(r.invariant.holds).toBe(true);
  });

  it('unchecked, a COMMIT error gives up at once', { timeout: 120_000 }, async () => {
    const c: LabConfig = {
      ...DEFAULT_CONFIG,
      workload: 'queue',
      strategy: 'skip-locked',
      isolation: 'serializable',
      workers: 4,
      transactions: 5,
      rows: 3,
      policy: { ...COURSE_POLICY, checkCommit: false },
    };
    const r = await runLab(c, { executor: ex, recordSchedule: true });
    const atCommit = failures(r).filter((f) => f.sql === 'COMMIT');
    expect(atCommit.length).toBeGreaterThan(0);
    for (const f of atCommit) expect(f.backoff).toBeUndefined();
    expect(r.giveUps).toBeGreaterThanOrEqual(atCommit.length);
  });

  it('no sleep after the last attempt; every earlier retryable failure sleeps before the next BEGIN', { timeout: 120_000 }, async () => {
    const policy = { ...COURSE_POLICY, maxAttempts: 2 };
    const c: LabConfig = {
      ...DEFAULT_CONFIG,
      workload: 'transfer',
      strategy: 'nowait-retry',
      workers: 4,
      transactions: 6,
      rows: 2,
      seed: 3,
      policy: { ...policy, retryOn: ['40P01', '40001', '55P03'] },
    };
    const r = await runLab(c, { executor: ex, recordSchedule: true });
    const fs = failures(r);
    const last = fs.filter((f) => f.attempt === policy.maxAttempts - 1);
    expect(r.giveUps).toBeGreaterThan(0);
    expect(last.length).toBe(r.giveUps);
    for (const f of last) expect(f.backoff).toBeUndefined();
    const earlier = fs.filter((f) => f.attempt < policy.maxAttempts - 1);
    expect(earlier.length).toBe(r.retries);
    for (const f of earlier) {
      expect(f.backoff).toBeGreaterThanOrEqual(backoffCeilingMs(policy, f.attempt) / 2);
      expect(f.next!.atMs).toBeGreaterThanOrEqual(f.endMs + f.backoff!);
    }
    // The run's backoff total is exactly the sleeps before further runs.
    expect(r.backoffMs).toBe(earlier.reduce((s, f) => s + f.backoff!, 0));
  });
});

describe('generated code is the lesson WithRetry', () => {
  it('Go: capped backoff with half jitter, sleep only before a further run, COMMIT on the same path', () => {
    const go = goCode({ ...DEFAULT_CONFIG, strategy: 'ordered' });
    expect(go).toContain('var DefaultRetry = RetryPolicy{Attempts: 5, Base: 100 * time.Millisecond, Max: 2000 * time.Millisecond}');
    expect(go).toContain('return ceiling/2 + rand.N(ceiling/2+1)');
    expect(go).toContain('if p.Base<<n < p.Max'.replace('if ', 'if n < 30 && '));
    expect(go).toContain('if n > 0 {\n\t\t\tt := time.NewTimer(p.backoff(n - 1))');
    expect(go).toContain('\treturn tx.Commit(ctx)\n}');
    expect(go).not.toContain('continue');
    expect(go).toContain('pgErr.Code == "40P01" || pgErr.Code == "40001"');
    const plain = goCode({ ...DEFAULT_CONFIG, policy: { ...COURSE_POLICY, jitter: false, checkCommit: false, retryOn: ['55P03'] } });
    expect(plain).not.toContain('math/rand');
    expect(plain).toContain('return fmt.Errorf("commit: %v", err)');
    expect(plain).toContain('pgErr.Code == "55P03"');
  });

  it('TypeScript: the same loop', () => {
    const ts = tsCode({ ...DEFAULT_CONFIG, isolation: 'serializable' });
    expect(ts).toContain('const ATTEMPTS = 5;');
    expect(ts).toContain('const MAX_MS = 2000;');
    expect(ts).toContain('Math.min(BASE_MS * 2 ** n, MAX_MS)');
    expect(ts).toContain('if (n > 0) await sleep(backoffMs(n - 1), signal);');
    expect(ts).not.toContain('continue');
  });
});
