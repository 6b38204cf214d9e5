import { describe, expect, it } from 'vitest';
import { formatText, IsolationError, printResultSet, runPermutation, runSpec, toTraces, type PermutationRun } from './isolation';
import type { PermutationTrace, PgMessage, PollResult, SessionDriver, Spec, StatementResult, StepBlocker, StepResult } from './types';
import { compareTraces, formatDivergences } from '../oracle/compare';

/** How a scripted step behaves once sent. */
interface FakeStep {
  /**
   * When the step can finish: at once (undefined), once another step was sent or is done, or
   * 'waited': never in a nonblocking poll, always in a blocking one (a timer such as
   * deadlock_timeout fires while isolationtester blocks on it).
   */
  until?: { sent: string } | { done: string } | 'waited';
  results?: StatementResult[];
  error?: PgMessage;
  notices?: PgMessage[];
  /** Notices already received when the step is first seen blocked. */
  blockedNotices?: PgMessage[];
}

/** An in-memory SessionDriver following a script; it logs every call. */
class FakeDriver implements SessionDriver {
  readonly log: string[] = [];
  private sent = new Set<string>();
  private done = new Set<string>();
  private running = new Map<string, { name: string; script: FakeStep; noticesGiven: number }>();

  constructor(
    private spec: Spec,
    private script: Record<string, FakeStep>,
  ) {}

  async begin(): Promise<void> {
    this.log.push('begin');
    this.sent.clear();
    this.done.clear();
  }
  async send(session: string, sql: string): Promise<void> {
    const step = this.spec.sessions.find((s) => s.name === session)!.steps.find((s) => s.sql === sql)!;
    if (this.running.has(session)) throw new Error(`fake: ${session} is busy`);
    this.log.push(`send ${step.name}`);
    this.sent.add(step.name);
    this.running.set(session, { name: step.name, script: this.script[step.name] ?? {}, noticesGiven: 0 });
  }
  async poll(session: string, wait: boolean): Promise<PollResult> {
    const r = this.running.get(session);
    if (!r) throw new Error(`fake: ${session} is idle`);
    this.log.push(`poll ${r.name}${wait ? ' wait' : ''}`);
    const until = r.script.until;
    const ready =
      until === undefined || (until === 'waited' ? wait : 'sent' in until ? this.sent.has(until.sent) : this.done.has(until.done));
    if (!ready) {
      if (wait) throw new Error(`fake: waiting for ${r.name} would hang`);
      const notices = r.noticesGiven === 0 ? (r.script.blockedNotices ?? []) : [];
      r.noticesGiven += notices.length;
      return { status: 'blocked', notices };
    }
    this.running.delete(session);
    this.done.add(r.name);
    const result: StepResult = {
      results: r.script.results ?? [{ command: 'SELECT 1', columns: ['x'], rows: [['1']] }],
      notices: [...(r.script.blockedNotices ?? []), ...(r.script.notices ?? [])],
    };
    if (r.script.error) result.error = r.script.error;
    return { status: 'done', result };
  }
  normalizeDetail(detail: string): string {
    return detail.replace(/\d+/g, '?');
  }
  async end(): Promise<void> {
    this.log.push('end');
    this.running.clear();
  }
}

/** A spec whose step `xN` belongs to session `x` and runs SQL `-- xN`. */
function specOf(sessions: Record<string, string[]>, permutation?: string): Spec {
  const spec: Spec = {
    setup: [],
    sessions: Object.entries(sessions).map(([name, steps]) => ({
      name,
      steps: steps.map((step) => ({ name: step, sql: `-- ${step}` })),
    })),
    permutations: [],
  };
  if (permutation) spec.permutations.push(parsePermutation(permutation));
  return spec;
}

/** "s1a(*) s2a(s1a) s3a(s1a notices 2)" → Permutation (enough syntax for these tests). */
function parsePermutation(text: string) {
  return {
    steps: text.split(/\s+(?![^(]*\))/).map((token) => {
      const m = /^(\w+)(?:\((.*)\))?$/.exec(token)!;
      const blockers: StepBlocker[] = (m[2] ? m[2].split(',') : []).map((b) => {
        const [step, , n] = b.trim().split(/\s+/);
        if (step === '*') return { kind: 'star' };
        return n === undefined ? { kind: 'step', step } : { kind: 'step', step, notices: Number(n) };
      });
      return { step: m[1], blockers };
    }),
  };
}

/** Compact view of printed lines: `s1a`, `s2a waiting`, `s2a done after s1c`, `s1b error after s2b`. */
function lines(run: PermutationRun): string[] {
  return run.records.map((r) => {
    const e = r.event;
    const outcome = e.outcome === 'waiting' ? ' waiting' : e.outcome === 'error' ? ' error' : '';
    const after = e.completedAfterStep ? `${outcome === '' ? ' done' : ''} after ${e.completedAfterStep}` : '';
    return `${e.step}${outcome}${after}`;
  });
}

const deadlock: PgMessage = {
  severity: 'ERROR',
  sqlstate: '40P01',
  message: 'deadlock detected',
  detail: 'Process 101 waits for ShareLock on transaction 7; blocked by process 102.',
};

describe('runPermutation', () => {
  it('reports a step waiting until another session commits', async () => {
    const spec = specOf({ s1: ['s1a', 's1c'], s2: ['s2a', 's2c'] }, 's1a s2a s1c s2c');
    const driver = new FakeDriver(spec, { s2a: { until: { done: 's1c' } } });
    const run = await runPermutation(spec, spec.permutations[0], driver);
    expect(lines(run)).toEqual(['s1a', 's2a waiting', 's1c', 's2a done after s1c', 's2c']);
    expect(driver.log).toEqual([
      'begin',
      'send s1a',
      'poll s1a',
      'send s2a',
      'poll s2a',
      'send s1c',
      'poll s1c',
      'poll s2a',
      'send s2c',
      'poll s2c',
      'end',
    ]);
  });

  it('waits for a busy session before sending its next step, reporting other completions', async () => {
    // s1b is the deadlock victim: only a blocking wait lets its deadlock_timeout fire.
    const spec = specOf({ s1: ['s1a', 's1b', 's1c'], s2: ['s2a', 's2b', 's2c'] }, 's1a s2a s1b s2b s1c s2c');
    const driver = new FakeDriver(spec, {
      s1b: { until: 'waited', error: deadlock, results: [] },
      s2b: { until: { done: 's1b' } },
    });
    const run = await runPermutation(spec, spec.permutations[0], driver);
    expect(lines(run)).toEqual(['s1a', 's2a', 's1b waiting', 's2b waiting', 's1b error after s2b', 's2b done after s2b', 's1c', 's2c']);
    expect(driver.log.slice(driver.log.indexOf('send s2b'))).toEqual([
      'send s2b',
      'poll s2b',
      'poll s1b',
      'poll s1b wait',
      'poll s2b',
      'send s1c',
      'poll s1c',
      'send s2c',
      'poll s2c',
      'end',
    ]);
    const victim = run.records[4].event;
    expect(victim).toMatchObject({ outcome: 'error', sqlstate: '40P01', message: 'deadlock detected' });
    expect(victim.detail).toBe('Process ? waits for ShareLock on transaction ?; blocked by process ?.');
    expect(victim.commands).toBeUndefined();
  });

  it('re-checks waiting steps in waiting-array order after each step', async () => {
    const spec = specOf({ s1: ['s1a'], s2: ['s2a'], s3: ['s3a'], s4: ['s4a'] }, 's2a s3a s1a s4a');
    const driver = new FakeDriver(spec, { s2a: { until: { sent: 's4a' } }, s3a: { until: { sent: 's4a' } } });
    const run = await runPermutation(spec, spec.permutations[0], driver);
    expect(lines(run)).toEqual(['s2a waiting', 's3a waiting', 's1a', 's4a', 's2a done after s4a', 's3a done after s4a']);
  });

  it('waits for every step still running at the end of the permutation', async () => {
    const spec = specOf({ s1: ['s1a'], s2: ['s2a'] }, 's1a s2a');
    const driver = new FakeDriver(spec, { s1a: { until: 'waited' } });
    const run = await runPermutation(spec, spec.permutations[0], driver);
    expect(lines(run)).toEqual(['s1a waiting', 's2a', 's1a done after s2a']);
    expect(driver.log.slice(-2)).toEqual(['poll s1a wait', 'end']);
  });

  it('(*) prints <waiting ...> once even when the step finishes at once', async () => {
    const spec = specOf({ s1: ['s1a'], s2: ['s2a'] }, 's1a(*) s2a');
    const driver = new FakeDriver(spec, {});
    const run = await runPermutation(spec, spec.permutations[0], driver);
    expect(lines(run)).toEqual(['s1a waiting', 's2a', 's1a done after s2a']);
    // The first check does not even look at the connection.
    expect(driver.log.slice(0, 3)).toEqual(['begin', 'send s1a', 'send s2a']);
  });

  it('(otherstep) holds back a finished step while otherstep is running', async () => {
    const spec = specOf({ s1: ['s1a'], s2: ['s2a'], s3: ['s3a'] }, 's2a s1a(s2a) s3a');
    const driver = new FakeDriver(spec, { s2a: { until: { sent: 's3a' } } });
    const run = await runPermutation(spec, spec.permutations[0], driver);
    expect(lines(run)).toEqual(['s2a waiting', 's1a waiting', 's3a', 's2a done after s3a', 's1a done after s3a']);
    // s1a's result was collected once, then held.
    expect(driver.log.filter((l) => l === 'poll s1a')).toHaveLength(1);
  });

  it('(otherstep) re-scans the waiting array when a later entry releases an earlier one', async () => {
    // Both wait on locks that s3a releases; s1a is first in the array but must wait for s2a.
    const spec = specOf({ s1: ['s1a'], s2: ['s2a'], s3: ['s3a', 's3b'] }, 's1a(s2a) s2a s3a s3b');
    const driver = new FakeDriver(spec, { s1a: { until: { sent: 's3a' } }, s2a: { until: { sent: 's3a' } } });
    const run = await runPermutation(spec, spec.permutations[0], driver);
    expect(lines(run)).toEqual(['s1a waiting', 's2a waiting', 's3a', 's2a done after s3a', 's1a done after s3a', 's3b']);
  });

  it('(otherstep notices N) waits for N more notices on that session', async () => {
    const notice = (message: string): PgMessage => ({ severity: 'NOTICE', sqlstate: '00000', message });
    const spec = specOf({ s1: ['s1a'], s2: ['s2a'], s3: ['s3a'] }, 's2a s1a(s2a notices 1) s3a');
    const driver = new FakeDriver(spec, {
      s2a: { until: { sent: 's3a' }, blockedNotices: [notice('one')], notices: [notice('two')] },
    });
    const run = await runPermutation(spec, spec.permutations[0], driver);
    expect(lines(run)).toEqual(['s2a waiting', 's1a waiting', 's3a', 's2a done after s3a', 's1a done after s3a']);
    expect(run.records[0].notices).toEqual([{ session: 's2', notice: notice('one') }]);
    expect(run.records[3].notices).toEqual([{ session: 's2', notice: notice('two') }]);
    expect(formatText(spec, [run])).toContain('s2: NOTICE:  one\nstep s2a: -- s2a <waiting ...>\n');
  });

  it('fails on mutually-blocking steps and still tears down', async () => {
    const spec = specOf({ s1: ['s1a'], s2: ['s2a'], s3: ['s3a'] }, 's1a(s2a) s2a(s1a) s3a');
    const driver = new FakeDriver(spec, { s1a: { until: { sent: 's3a' } }, s2a: { until: { sent: 's3a' } } });
    await expect(runPermutation(spec, spec.permutations[0], driver)).rejects.toThrow(
      'failed to complete permutation due to mutually-blocking steps',
    );
    expect(driver.log.at(-1)).toBe('end');
  });

  it('rejects undefined steps and blockers on the own session', async () => {
    const spec = specOf({ s1: ['s1a', 's1b'] }, 's1a s1x');
    await expect(runSpec(spec, new FakeDriver(spec, {}))).rejects.toThrow('undefined step "s1x" specified in permutation');
    const own = specOf({ s1: ['s1a', 's1b'] }, 's1a s1b(s1a)');
    await expect(runSpec(own, new FakeDriver(own, {}))).rejects.toThrow(IsolationError);
  });
});

describe('runSpec', () => {
  it('runs every interleaving when the spec names none, in isolationtester order', async () => {
    const spec = specOf({ s1: ['a1', 'a2'], s2: ['b1'] });
    const all = await runSpec(spec, new FakeDriver(spec, {}));
    expect(all.map((r) => r.permutation)).toEqual(['a1 a2 b1', 'a1 b1 a2', 'b1 a1 a2']);
    const runs = await runSpec(spec, new FakeDriver(spec, {}), { permutation: 2 });
    expect(runs.map((r) => r.permutation)).toEqual(['a1 b1 a2']);
    await expect(runSpec(spec, new FakeDriver(spec, {}), { permutation: 4 })).rejects.toThrow('no permutation 4');
  });

  it('records a driver failure in its permutation and goes on with the next', async () => {
    const spec = specOf({ s1: ['a1', 'a2'], s2: ['b1'] });
    class Failing extends FakeDriver {
      private begun = 0;
      override async begin(): Promise<void> {
        if (++this.begun === 2) throw new Error('replay of session s1 diverged');
        await super.begin();
      }
    }
    const runs = await runSpec(spec, new Failing(spec, {}));
    expect(runs.map((r) => [r.permutation, r.failed])).toEqual([
      ['a1 a2 b1', undefined],
      ['a1 b1 a2', 'replay of session s1 diverged'],
      ['b1 a1 a2', undefined],
    ]);
    const traces = toTraces(runs);
    expect(traces[1]).toEqual({ permutation: 'a1 b1 a2', events: [], failed: 'replay of session s1 diverged' });
    const real = toTraces(await runSpec(spec, new FakeDriver(spec, {})));
    expect(compareTraces(real, traces).map((d) => d.description)).toEqual([
      'permutation 2 (a1 b1 a2): the simulator failed: replay of session s1 diverged',
    ]);
  });
});

describe('formatText', () => {
  it('prints like isolationtester', async () => {
    const spec = specOf({ s1: ['s1a', 's1c'], s2: ['s2a'] }, 's1a s2a s1c');
    spec.sessions[0].steps[0].sql = 'SELECT * FROM foo FOR UPDATE;';
    const driver = new FakeDriver(spec, {
      s1a: { results: [{ command: 'SELECT 1', columns: ['id', 'data'], rows: [['1', 'x']] }] },
      s2a: {
        until: { done: 's1c' },
        results: [],
        error: { severity: 'ERROR', sqlstate: '55P03', message: 'could not obtain lock on row in relation "foo"' },
      },
      s1c: { results: [{ command: 'COMMIT' }] },
    });
    const runs = await runSpec(spec, driver);
    expect(formatText(spec, runs)).toBe(
      [
        'Parsed test spec with 2 sessions',
        '',
        'starting permutation: s1a s2a s1c',
        'step s1a: SELECT * FROM foo FOR UPDATE;',
        'id|data',
        '--+----',
        ' 1|x   ',
        '(1 row)',
        '',
        'step s2a: -- s2a <waiting ...>',
        'step s1c: -- s1c',
        'step s2a: <... completed>',
        'ERROR:  could not obtain lock on row in relation "foo"',
        '',
      ].join('\n'),
    );
    expect(toTraces(runs)[0].events[3]).toEqual({
      step: 's2a',
      session: 's2',
      outcome: 'error',
      sqlstate: '55P03',
      message: 'could not obtain lock on row in relation "foo"',
      completedAfterStep: 's1c',
    });
  });

  it.each([
    {
      name: 'numbers right, text left, NULL and empty skipped',
      set: {
        command: 'SELECT 2',
        columns: ['n', 'txt', 'maybe'],
        rows: [
          ['10', 'ab', null],
          ['-1.5e3', '', '7'],
        ],
      },
      expected: '     n|txt|maybe\n------+---+-----\n    10|ab |     \n-1.5e3|   |    7\n(2 rows)\n\n',
    },
    {
      name: 'a leading E or a trailing non-digit is not numeric',
      set: {
        command: 'SELECT 2',
        columns: ['a', 'b'],
        rows: [
          ['E1', '1.'],
          ['2', '3'],
        ],
      },
      expected: 'a |b \n--+--\nE1|1.\n2 |3 \n(2 rows)\n\n',
    },
    {
      name: 'no rows',
      set: { command: 'SELECT 0', columns: ['id'], rows: [] },
      expected: 'id\n--\n(0 rows)\n\n',
    },
    { name: 'no columns prints nothing', set: { command: 'SELECT 1', columns: [], rows: [[]] }, expected: '' },
  ])('printResultSet: $name', ({ set, expected }) => {
    const frozen = Object.freeze({ ...set, rows: set.rows.map((r) => Object.freeze([...r])) });
    expect(printResultSet(frozen as StatementResult)).toBe(expected);
  });
});

describe('compareTraces', () => {
  const base: PermutationTrace[] = [
    {
      permutation: 's1a s2a',
      events: [
        { step: 's1a', session: 's1', outcome: 'ok', commands: ['BEGIN'] },
        { step: 's2a', session: 's2', outcome: 'waiting' },
      ],
    },
  ];

  it('finds no divergence between equal traces', () => {
    expect(compareTraces(base, structuredClone(base))).toEqual([]);
    expect(formatDivergences([])).toBe('traces match');
  });

  it('names the permutation, event, field and both values', () => {
    const actual = structuredClone(base);
    actual[0].events[1] = { step: 's2a', session: 's2', outcome: 'ok' };
    actual[0].events.push({ step: 's2b', session: 's2', outcome: 'ok' });
    const d = compareTraces(base, actual);
    expect(d.map((x) => x.description)).toEqual([
      'permutation 1 (s1a s2a), event 2 [s2a (s2) waiting]: outcome expected "waiting", actual "ok"',
      'permutation 1 (s1a s2a), event 3: expected (no event), actual s2b (s2) ok',
    ]);
    expect(formatDivergences(d)).toMatch(/^2 divergences:\n- permutation 1/);
  });
});
