/**
 * Player flows: every outcome a script line, a pane, the wait-for graph and the timeline show is
 * the one the engine produced. Each flow asserts on the real engine's output through the real UI
 * and fails on a screen that tells another story (a green ✓ on a failed line, a lost 40P01 in the
 * lab, a terminated session shown alive, a stale victim badge, an unreachable timeline mark,
 * setup noise at step 0, the lab's `clock` pane, an empty broken-edge label).
 */
import type { Locator } from 'playwright-core';
import { assert, norm, waitFor, type FlowContext } from '../harness';
import type { Flow } from '../flow';
import { rightAnswers } from '../lessonData';

/** One script line as a pane shows it. */
interface Line {
  session: string;
  step: string;
  outcome: string;
  sqlstate: string | null;
  text: string;
}

async function scriptLines(ctx: FlowContext): Promise<Line[]> {
  return ctx.byTestId('script-line').evaluateAll((els) =>
    els.map((el) => ({
      session: el.closest('[data-testid="session-pane"]')?.getAttribute('data-session') ?? '',
      step: el.getAttribute('data-step') ?? '',
      outcome: el.getAttribute('data-outcome') ?? '',
      sqlstate: el.getAttribute('data-sqlstate'),
      text: (el as HTMLElement).innerText,
    })),
  );
}

const show = (lines: Line[]) => lines.map((l) => `${l.session}/${l.step}:${l.outcome}${l.sqlstate ? `(${l.sqlstate})` : ''}`).join(' ');

/** Steps to the end of the script (answering checkpoints per the context's policy). */
async function toEnd(ctx: FlowContext): Promise<void> {
  for (let [c, total] = await ctx.position(); c < total; [c, total] = await ctx.position()) await ctx.next();
}

/** Runs an ad-hoc statement in a session and waits until its pane's scrollback has one more entry. */
async function adHoc(ctx: FlowContext, session: string, sql: string): Promise<Locator> {
  const entries = ctx.pane(session).getByTestId('scroll-entry');
  const before = await entries.count();
  await ctx.submitAdHoc(session, sql);
  await waitFor(
    async () => (await entries.count()) === before + 1 && !(await ctx.busy()),
    `ad-hoc "${sql}" in ${session} left no entry in its scrollback`,
  );
  return entries.nth(before);
}

const outcomeMarks: Flow = {
  name: 'outcome-marks',
  title:
    'script lines show their real outcome: ok, waiting, cancelled (40P01 victim), error (55P03), skipped (25P02); never ✓ on a failure',
  async run(ctx) {
    await ctx.openLesson('classic-deadlock', 6);
    const lines = await scriptLines(ctx);
    assert(lines.length > 0, 'no data-testid="script-line" elements in the panes');
    const b = lines.filter((l) => l.session === 'B');
    const victim = b.find((l) => /WHERE id = 1/.test(l.text) && /balance \+ 100/.test(l.text));
    assert(victim, `B's UPDATE … WHERE id = 1 line not found: ${show(lines)}`);
    assert(
      victim.outcome === 'cancelled' && victim.sqlstate === '40P01',
      `B's deadlocked UPDATE shows ${victim.outcome}/${victim.sqlstate}: ${show(lines)}`,
    );
    assert(!victim.text.includes('✓'), `the cancelled line still carries a ✓: "${victim.text}"`);
    assert(
      /40P01/.test(victim.text) && /victim/.test(victim.text),
      `the cancelled line does not say 40P01 / victim in words: "${norm(victim.text)}"`,
    );
    const a = lines.filter((l) => l.session === 'A');
    assert(
      a.slice(0, 2).every((l) => l.outcome === 'ok' && l.text.includes('✓')),
      `A's first two lines should be ok with ✓: ${show(a)}`,
    );
    assert(
      b.some((l) => l.outcome === 'current'),
      `B's ROLLBACK is the next step: ${show(b)}`,
    );
    assert(
      lines.filter((l) => l.outcome === 'error').every((l) => l.sqlstate),
      'an error line without data-sqlstate',
    );
    await ctx.shot('classic-step6');

    // One step earlier both UPDATEs wait; nothing is marked done that has not finished.
    await ctx.openLesson('classic-deadlock', 5);
    const waiting = (await scriptLines(ctx)).filter((l) => l.outcome === 'waiting').map((l) => l.session);
    assert(waiting.sort().join() === 'A,B', `at step 5 both second UPDATEs wait: ${show(await scriptLines(ctx))}`);

    // NOWAIT fails with 55P03; the next statement in the aborted transaction is skipped (25P02).
    await ctx.page.goto(ctx.url('#/lab'));
    await waitFor(() => ctx.byTestId('lab-editor').isVisible(), 'the lab editor never appeared');
    const spec = [
      '# title.en: NOWAIT then one more statement',
      'setup { CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL); INSERT INTO t VALUES (1, 0), (2, 0); }',
      'teardown { DROP TABLE t; }',
      'session s1',
      'step s1lock { BEGIN; SELECT id FROM t WHERE id = 1 FOR UPDATE; }',
      'step s1end { COMMIT; }',
      'session s2',
      'step s2try { BEGIN; SELECT id FROM t WHERE id = 1 FOR UPDATE NOWAIT; }',
      'step s2more { UPDATE t SET v = v + 1 WHERE id = 2; }',
      'step s2end { COMMIT; }',
      'permutation s1lock s2try s2more s1end s2end',
      '',
    ].join('\n');
    await ctx.byTestId('lab-import').setInputFiles({ name: 'nowait-then-more.spec', mimeType: 'text/plain', buffer: Buffer.from(spec) });
    await ctx.labPlayable('after importing the NOWAIT spec');
    await ctx.byTestId('lab-play').click();
    await ctx.waitForCursor(0, 'opening the NOWAIT spec', 40_000);
    await toEnd(ctx);
    const end = await scriptLines(ctx);
    const by = (step: string) => end.find((l) => l.step === step);
    assert(by('s2try')?.outcome === 'error' && by('s2try')?.sqlstate === '55P03', `NOWAIT line: ${show(end)}`);
    assert(by('s2more')?.outcome === 'skipped' && by('s2more')?.sqlstate === '25P02', `statement after the failure: ${show(end)}`);
    assert(by('s2try')?.text.includes('✗'), `the failed NOWAIT line has no ✗: "${by('s2try')?.text}"`);
    assert(by('s2end')?.outcome === 'ok' && by('s1lock')?.outcome === 'ok', `COMMIT lines: ${show(end)}`);
    await ctx.shot('nowait');
    ctx.assertNoConsoleErrors();
  },
};

const LAB_S1 = ['BEGIN; UPDATE t SET v = v + 1 WHERE id = 1;', 'UPDATE t SET v = v + 1 WHERE id = 2;', 'COMMIT;'];
const LAB_S2 = ['BEGIN; UPDATE t SET v = v + 1 WHERE id = 2;', 'UPDATE t SET v = v + 1 WHERE id = 1;', 'COMMIT;'];

const labScrollback: Flow = {
  name: 'lab-scrollback',
  title: 'lab: the victim keeps its 40P01 in its pane after its COMMIT → ROLLBACK (psql-like scrollback)',
  async run(ctx) {
    await ctx.page.goto(ctx.url('#/lab'));
    await waitFor(() => ctx.byTestId('lab-editor').isVisible(), 'the lab editor never appeared at #/lab');
    await ctx.byTestId('lab-blank').click();
    for (let si = 0; si < 2; si++) for (let k = 0; k < 2; k++) await ctx.byTestId('lab-add-step').nth(si).click();
    const sqls = [...LAB_S1, ...LAB_S2];
    for (let i = 0; i < sqls.length; i++) await ctx.setSql('lab-step-sql', i, sqls[i]);
    await ctx.byTestId('lab-order').fill('s1a s2a s1b s2b s1c s2c');
    await ctx.labPlayable('after building the scenario');
    await ctx.byTestId('lab-play').click();
    await ctx.waitForCursor(0, 'opening the scenario in the lab player', 40_000);
    await toEnd(ctx);
    const s1 = ctx.pane('s1');
    const entries = await s1.getByTestId('scroll-entry').evaluateAll((els) =>
      els.map((e) => ({
        step: e.getAttribute('data-step'),
        sqlstate: e.getAttribute('data-sqlstate'),
        text: (e as HTMLElement).innerText,
      })),
    );
    const failed = entries.findIndex((e) => e.sqlstate === '40P01');
    const commit = entries.findIndex((e) => e.step === 's1c');
    assert(failed >= 0, `s1's scrollback lost the 40P01: ${JSON.stringify(entries.map((e) => norm(e.text)))}`);
    assert(
      entries[failed].step === 's1b' && /ERROR:\s+deadlock detected/.test(entries[failed].text),
      `40P01 entry: ${norm(entries[failed].text)}`,
    );
    assert(
      commit > failed && /ROLLBACK/.test(entries[commit].text),
      `s1's COMMIT (→ ROLLBACK) must come after the error: ${JSON.stringify(entries.map((e) => norm(e.text)))}`,
    );
    const lines = await scriptLines(ctx);
    const s1b = lines.find((l) => l.step === 's1b');
    assert(s1b?.outcome === 'cancelled' && s1b.sqlstate === '40P01', `s1b line: ${show(lines)}`);
    const s1c = lines.find((l) => l.step === 's1c');
    assert(s1c?.outcome === 'ok' && /ROLLBACK/.test(s1c.text), `s1's COMMIT line must say the server rolled back: "${s1c?.text}"`);
    // The scrollback region is reachable by keyboard (it scrolls).
    assert((await s1.getByTestId('session-output').getAttribute('tabindex')) === '0', 'the scrollback is not focusable');
    await ctx.shot();
    ctx.assertNoConsoleErrors();
  },
};

const terminatedSession: Flow = {
  name: 'terminated-session',
  title: 'idle-in-transaction: after FATAL 25P03 session A is shown as gone; later statements get what libpq reports',
  async run(ctx) {
    ctx.predictPolicy = rightAnswers('idle-in-transaction');
    await ctx.openLesson('idle-in-transaction', 0);
    await toEnd(ctx);
    const a = ctx.pane('A');
    assert((await a.getAttribute('data-state')) === 'terminated', `A's state at the end: ${await a.getAttribute('data-state')}`);
    assert(/terminated/.test((await a.getByTestId('session-state').innerText()) ?? ''), "A's state is not said in words");
    assert((await a.getByTestId('session-pid-gone').count()) === 1, "A's pid is not struck through");
    const fatal = norm(
      (await a
        .getByTestId('scroll-terminated')
        .innerText()
        .catch(() => '')) ?? '',
    );
    assert(
      /FATAL: terminating connection due to idle-in-transaction timeout/.test(fatal) && /25P03/.test(fatal),
      `A's pane lacks the FATAL: "${fatal}"`,
    );
    const b = ctx.pane('B');
    assert((await b.getAttribute('data-state')) !== 'terminated', 'B was not terminated');
    await ctx.shot('end');
    // libpq reads the server's FATAL with the next command, then finds the connection closed.
    const first = norm(await (await adHoc(ctx, 'A', 'SELECT 1;')).innerText());
    assert(
      /FATAL: terminating connection due to idle-in-transaction timeout/.test(first) &&
        /25P03/.test(first) &&
        /server closed the connection unexpectedly/.test(first),
      `first statement after termination (psql prints the FATAL, then libpq's "server closed the connection unexpectedly"): "${first}"`,
    );
    const second = norm(await (await adHoc(ctx, 'A', 'SELECT 2;')).innerText());
    assert(/no connection to the server/.test(second) && !/SQLSTATE/.test(second), `second statement after termination: "${second}"`);
    assert((await a.getAttribute('data-state')) === 'terminated', 'A came back to life after an ad-hoc statement');
    await ctx.shot('adhoc');
    ctx.assertNoConsoleErrors();
  },
};

async function victims(ctx: FlowContext): Promise<string[]> {
  return ctx.page
    .locator('[data-testid="wfg-node"][data-victim="true"]')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-session') ?? ''));
}

const victimBadge: Flow = {
  name: 'victim-badge-current',
  title: 'the victim badge shows while the deadlock is the present, not after the victim moved on',
  async run(ctx) {
    await ctx.openLesson('classic-deadlock', 6);
    assert((await victims(ctx)).join() === 'B', `victim at step 6: [${await victims(ctx)}]`);
    const summary = (await ctx.byTestId('wait-for-graph').getAttribute('aria-label')) ?? '';
    assert(/Victim: session B/.test(summary), `the graph summary does not name the victim: "${summary}"`);
    await ctx.next(); // B: ROLLBACK
    assert((await victims(ctx)).length === 0, `victim badge after B's ROLLBACK: [${await victims(ctx)}]`);
    const after = (await ctx.byTestId('wait-for-graph').getAttribute('aria-label')) ?? '';
    assert(!/Victim/.test(after), `the graph summary still names a victim: "${after}"`);
    assert((await ctx.page.locator('[data-testid="timeline-mark"][data-kind="deadlock"]').count()) === 1, 'the deadlock left the timeline');
    ctx.predictPolicy = rightAnswers('diagnose-blocking');
    await ctx.openLesson('diagnose-blocking', 0);
    await toEnd(ctx);
    assert((await victims(ctx)).length === 0, `victim badge at the end of diagnose-blocking: [${await victims(ctx)}]`);
    await ctx.shot('diagnose-end');
    ctx.assertNoConsoleErrors();
  },
};

const stepZeroQuiet: Flow = {
  name: 'step0-quiet',
  title: 'step 0 shows no session-setup output (SET) and no setup commits on the timeline',
  async run(ctx) {
    for (const id of ['classic-deadlock', 'idle-in-transaction', 'diagnose-blocking']) {
      await ctx.openLesson(id, 0);
      const panes = await ctx.panes();
      const noisy = panes.filter((p) => /\bSET\b/.test(p.output) || p.output.trim() !== '');
      assert(noisy.length === 0, `${id} step 0: pane output ${JSON.stringify(noisy.map((p) => [p.session, norm(p.output)]))}`);
      const marks = await ctx.byTestId('timeline-mark').count();
      assert(marks === 0, `${id} step 0: ${marks} timeline marks (setup is not the learner's history)`);
      const lines = await scriptLines(ctx);
      assert(
        lines.every((l) => l.outcome === 'pending' || l.outcome === 'current'),
        `${id} step 0: ${show(lines)}`,
      );
    }
    await ctx.shot();
    ctx.assertNoConsoleErrors();
  },
};

const labNoClock: Flow = {
  name: 'lab-no-clock',
  title: '"Open in the lab" from a lesson with pauses plays without a pane, node or lane for the hidden clock session',
  async run(ctx) {
    await ctx.openLesson('classic-deadlock', 0);
    await ctx.byTestId('open-in-lab').click();
    await waitFor(() => ctx.byTestId('lab-editor').isVisible(), 'the lab never opened from the lesson');
    await ctx.labPlayable('the lesson opened in the lab');
    await ctx.byTestId('lab-play').click();
    await ctx.waitForCursor(0, 'playing the lesson in the lab', 40_000);
    await toEnd(ctx);
    const names = (await ctx.panes()).map((p) => p.session);
    assert(names.join() === 'A,B', `lab panes: [${names}]`);
    const nodes = await ctx.byTestId('wfg-node').evaluateAll((els) => els.map((e) => e.getAttribute('data-session')));
    assert(!nodes.includes('clock'), `graph nodes: [${nodes}]`);
    const lanes = await ctx.byTestId('timeline').locator('text.lane').allTextContents();
    assert(!lanes.includes('clock'), `timeline lanes: [${lanes}]`);
    // The pauses still happened: the deadlock was found on the virtual clock.
    assert(
      (await scriptLines(ctx)).some((l) => l.sqlstate === '40P01'),
      'the lesson played in the lab never reached its 40P01',
    );
    await ctx.shot();
    ctx.assertNoConsoleErrors();
  },
};

/** PostgreSQL's src/test/isolation/specs/deadlock-simple.spec. */
const DEADLOCK_SIMPLE = `# The deadlock detector has a special case for "simple" deadlocks.  A simple
# deadlock occurs when we attempt a lock upgrade while another process waits
# for a lock upgrade on the same object; and the sought locks conflict with
# those already held, so that neither process can complete its upgrade until
# the other releases its lock.

setup
{
  CREATE TABLE a1 ();
}

teardown
{
  DROP TABLE a1;
}

session s1
setup		{ BEGIN; }
step s1as	{ LOCK TABLE a1 IN ACCESS SHARE MODE; }
step s1ae	{ LOCK TABLE a1 IN ACCESS EXCLUSIVE MODE; }
step s1c	{ COMMIT; }

session s2
setup		{ BEGIN; }
step s2as	{ LOCK TABLE a1 IN ACCESS SHARE MODE; }
step s2ae	{ LOCK TABLE a1 IN ACCESS EXCLUSIVE MODE; }
step s2c	{ COMMIT; }

permutation s1as s2as s1ae s2ae s1c s2c
`;

const brokenEdgeLabel: Flow = {
  name: 'broken-edge-label',
  title: 'lab: after PostgreSQL\'s deadlock-simple, each "✂ broken" edge says what was requested',
  async run(ctx) {
    await ctx.page.goto(ctx.url('#/lab'));
    await waitFor(() => ctx.byTestId('lab-editor').isVisible(), 'the lab editor never appeared at #/lab');
    await ctx
      .byTestId('lab-import')
      .setInputFiles({ name: 'deadlock-simple.spec', mimeType: 'text/plain', buffer: Buffer.from(DEADLOCK_SIMPLE) });
    await ctx.labPlayable('after importing deadlock-simple');
    await ctx.byTestId('lab-play').click();
    await ctx.waitForCursor(0, 'opening deadlock-simple', 40_000);
    for (let i = 0; i < 4; i++) await ctx.next();
    const labels = await ctx
      .byTestId('wfg-broken-edge')
      .evaluateAll((els) =>
        els.map((e) => `${e.getAttribute('data-from')}->${e.getAttribute('data-to')}: ${e.querySelector('text')?.textContent ?? ''}`),
      );
    assert(labels.length === 2, `broken edges after s2ae: ${JSON.stringify(labels)}`);
    for (const l of labels)
      assert(
        /broken: AccessExclusiveLock on relation \d+ of database \d+$/.test(norm(l)) || /broken: \S/.test(norm(l)),
        `empty or odd label: "${l}"`,
      );
    assert(
      labels.some((l) => /s2->s1: .*AccessExclusiveLock on relation/.test(l)),
      `the victim's refused request is not named: ${JSON.stringify(labels)}`,
    );
    const text = norm(await ctx.byTestId('wfg-edges-text').innerText());
    assert(!/\(\)/.test(text), `the graph's text alternative has an empty lock: "${text}"`);
    await ctx.shot();
    ctx.assertNoConsoleErrors();
  },
};

/** The timeline marks as drawn: kind, lane, time and on-screen box. */
async function marks(ctx: FlowContext) {
  // elementFromPoint only sees the viewport: bring the timeline into view first.
  await ctx.byTestId('timeline').evaluate((el) => el.scrollIntoView({ block: 'center' }));
  return ctx.byTestId('timeline-mark').evaluateAll((els) =>
    els.map((e) => {
      const r = e.getBoundingClientRect();
      const cx = r.left + r.width / 2;
      const cy = r.top + r.height / 2;
      return {
        kind: e.getAttribute('data-kind') ?? '',
        session: e.getAttribute('data-session') ?? '',
        atMs: Number(e.getAttribute('data-at-ms')),
        box: { left: r.left, right: r.right, top: r.top, bottom: r.bottom },
        // What a pointer at the mark's centre would hit: the mark itself, not one drawn over it.
        hit: document.elementFromPoint(cx, cy)?.closest('[data-testid="timeline-mark"]') === e,
      };
    }),
  );
}

const timelineMoment: Flow = {
  name: 'timeline-moment',
  title: 'timeline: marks at the same moment are all reachable by mouse and keyboard; a jump shows that moment (detection at t = 3 s)',
  async run(ctx) {
    ctx.predictPolicy = rightAnswers('classic-deadlock');
    await ctx.openLesson('classic-deadlock', 0);
    for (let i = 0; i < 6; i++) await ctx.next();
    assert(/t = 4 s/.test(await ctx.clock()), `clock at the end of step 6: "${await ctx.clock()}"`);
    const all = await marks(ctx);
    const b = all.filter((m) => m.session === 'B' && m.atMs === 3000);
    assert(b.some((m) => m.kind === 'deadlock') && b.some((m) => m.kind === 'failed'), `B's marks at 3 s: ${JSON.stringify(b)}`);
    for (const m of all) assert(m.hit, `the ${m.kind} mark of ${m.session} at ${m.atMs} ms is covered by another mark`);
    const [d, f] = [b.find((m) => m.kind === 'deadlock')!, b.find((m) => m.kind === 'failed')!];
    assert(
      d.box.right <= f.box.left || f.box.right <= d.box.left,
      `the deadlock and failed marks overlap: ${JSON.stringify([d.box, f.box])}`,
    );
    await ctx.shot('marks');

    // Mouse: the deadlock mark shows the moment of detection, inside the 2 s pause.
    await ctx.page.locator('[data-testid="timeline-mark"][data-kind="deadlock"][data-session="B"]').click();
    await waitFor(
      async () => /t = 3 s/.test(await ctx.clock()) && !(await ctx.busy()),
      `after clicking the deadlock mark the clock shows "${await ctx.clock()}", not t = 3 s`,
    );
    assert((await ctx.position())[0] === 6, `the moment belongs to step 6, the counter shows ${(await ctx.position())[0]}`);
    assert(
      (await ctx.byTestId('player').getAttribute('data-mid-step')) === 'true',
      'a moment inside the step is marked data-mid-step (the monkey relies on it)',
    );
    const b6 = (await scriptLines(ctx)).find((l) => l.session === 'B' && l.outcome === 'cancelled');
    assert(b6?.sqlstate === '40P01', "at the moment of detection B's UPDATE is cancelled with 40P01");
    assert((await victims(ctx)).join() === 'B', `victim at the moment of detection: [${await victims(ctx)}]`);
    await ctx.shot('detected');

    // Keyboard: Tab reaches the failed mark at the same moment; Enter jumps there too.
    await ctx.key('ArrowRight', 7);
    assert(/t = 4 s/.test(await ctx.clock()), `the next step starts after the pause ends: "${await ctx.clock()}"`);
    assert((await ctx.byTestId('player').getAttribute('data-mid-step')) === null, 'a finished step is not marked data-mid-step');
    const failed = ctx.page.locator('[data-testid="timeline-mark"][data-kind="failed"][data-session="B"][data-at-ms="3000"]');
    await failed.focus();
    await ctx.page.keyboard.press('Enter');
    await waitFor(
      async () => /t = 3 s/.test(await ctx.clock()) && !(await ctx.busy()),
      `Enter on the failed mark: clock "${await ctx.clock()}"`,
    );
    await ctx.next();
    assert(
      /t = 4 s/.test(await ctx.clock()) && (await ctx.position())[0] === 7,
      `Next after the moment: ${await ctx.clock()} at step ${(await ctx.position())[0]}`,
    );
    ctx.assertNoConsoleErrors();
  },
};

const engineStarting: Flow = {
  name: 'engine-starting',
  title:
    'while the engine starts, the lesson already shows its narration and step count, Next waits, and the sessions come with the engine',
  async run(ctx) {
    // The prebuilt cluster is the engine's last download: holding it back keeps the engine starting.
    let release: () => void = () => undefined;
    const held = new Promise<void>((ok) => (release = ok));
    await ctx.context.route(/pgdata[^/]*\.tgz$/, async (route) => {
      await held;
      await route.continue();
    });
    await ctx.page.goto(ctx.url('#/lessons/classic-deadlock'));
    await ctx.byTestId('engine-starting').waitFor();
    const narration = norm(await ctx.byTestId('narration').innerText());
    assert(/opposite order/.test(narration), `the lesson's summary is not shown while the engine starts: "${narration}"`);
    const [cursor, total] = await ctx.position();
    assert(cursor === 0 && total > 0, `the step counter reads ${cursor} of ${total} while the engine starts`);
    assert(await ctx.byTestId('step-next').isDisabled(), 'Next is enabled before the engine answered');
    assert((await ctx.byTestId('session-pane').count()) === 0, 'session panes are drawn before the engine answered');
    await ctx.shot('starting', true);
    release();
    await ctx.waitForCursor(0, 'the engine answering');
    assert((await ctx.byTestId('engine-starting').count()) === 0, 'the placeholder stays after the engine answered');
    const panes = await ctx.byTestId('session-pane').evaluateAll((els) => els.map((e) => e.getAttribute('data-session')));
    assert(panes.join() === 'A,B', `the sessions after the engine answered: ${panes.join()}`);
    assert(
      (await ctx.position())[1] === total,
      `the script's length changed when the engine answered: ${total} → ${(await ctx.position())[1]}`,
    );
    await ctx.next();
    assert((await ctx.position())[0] === 1, 'Next did not run step 1');
    ctx.assertNoConsoleErrors();
  },
};

export const FLOWS: Flow[] = [
  engineStarting,
  timelineMoment,
  outcomeMarks,
  labScrollback,
  terminatedSession,
  victimBadge,
  stepZeroQuiet,
  labNoClock,
  brokenEdgeLabel,
];
