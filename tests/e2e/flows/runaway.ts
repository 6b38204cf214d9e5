/**
 * A runaway step stopped from the watchdog's countdown: it ends as a client
 * cancel ends a statement in PostgreSQL (57014, the open block aborted), the player moves past
 * it, and undo / redo replay it as cancelled instead of running it again.
 */
import { assert, diffViews, norm, waitFor, type FlowContext } from '../harness';
import type { Flow } from '../flow';

const RUNAWAY = 'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT count(*) FROM r;';

const SPEC = [
  'setup { CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 0); }',
  'session a',
  'step a1 { BEGIN; UPDATE t SET v = 1 WHERE id = 1; }',
  `step a2 { ${RUNAWAY} }`,
  'step a3 { SELECT v FROM t WHERE id = 1; }',
  'step a4 { ROLLBACK; }',
  'session b',
  'step b1 { SELECT v FROM t WHERE id = 1; }',
  'permutation a1 a2 a3 a4 b1',
  '',
].join('\n');

/** The outcome and SQLSTATE of one script line. */
async function line(ctx: FlowContext, step: string): Promise<{ outcome: string | null; sqlstate: string | null; text: string }> {
  const el = ctx.page.locator(`[data-testid="script-line"][data-step="${step}"]`).first();
  return {
    outcome: await el.getAttribute('data-outcome'),
    sqlstate: await el.getAttribute('data-sqlstate'),
    text: norm(await el.innerText()),
  };
}

/** Clicks "Next step" and returns how long the player took to settle at `cursor` (ms). */
async function timedNext(ctx: FlowContext, cursor: number, what: string): Promise<number> {
  const t0 = Date.now();
  await ctx.byTestId('step-next').click();
  await ctx.waitForCursor(cursor, what);
  return Date.now() - t0;
}

const runawayStep: Flow = {
  name: 'runaway-step',
  title:
    'a runaway step stopped from the countdown ends with 57014 (block aborted, 25P02 after); Next moves on; Prev/Next and a reload replay it as cancelled',
  viewport: { width: 1440, height: 900 },
  async run(ctx) {
    await ctx.page.goto(ctx.url('#/lab'));
    await waitFor(() => ctx.byTestId('lab-editor').isVisible(), 'the lab editor never appeared at #/lab');
    await ctx.byTestId('lab-import').setInputFiles({ name: 'runaway.spec', mimeType: 'text/plain', buffer: Buffer.from(SPEC) });
    await waitFor(
      async () => (await ctx.byTestId('lab-issue').count()) === 0 && (await ctx.byTestId('lab-play').isEnabled()),
      `the lab reports problems: ${JSON.stringify(await ctx.byTestId('lab-issue').allInnerTexts())}`,
    );
    await ctx.byTestId('lab-play').click();
    await ctx.waitForCursor(0, 'opening the runaway spec', 40_000);
    await ctx.next();

    // The runaway: the countdown appears past 3 s; "Stop now" cancels it.
    await ctx.byTestId('step-next').click();
    const banner = ctx.byTestId('watchdog-countdown');
    await waitFor(() => banner.isVisible(), 'no countdown for the runaway step', 20_000);
    await ctx.byTestId('watchdog-stop').click();
    await ctx.waitForCursor(2, 'after stopping the runaway step', 30_000);
    const a2 = await line(ctx, 'a2');
    assert(a2.sqlstate === '57014' && (a2.outcome === 'cancelled' || a2.outcome === 'error'), `the stopped line: ${JSON.stringify(a2)}`);
    const pane = norm((await ctx.paneView('a')).output);
    assert(pane.includes('ERROR: canceling statement due to user request'), `pane a after Stop: "${pane.slice(-300)}"`);
    assert((await ctx.states()).a === 'aborted', `session a after the cancel: ${JSON.stringify(await ctx.states())}`);
    const atStopped = await ctx.view();
    await ctx.shot('cancelled-en');

    // Next goes on at once: the aborted block refuses the next statement (25P02).
    const ms = await timedNext(ctx, 3, 'Next after the cancelled step');
    assert(ms < 1000, `Next after the cancelled step took ${ms} ms (the runaway ran again?)`);
    const a3 = await line(ctx, 'a3');
    assert(a3.sqlstate === '25P02', `the statement after the cancel: ${JSON.stringify(a3)}`);
    const atNext = await ctx.view();

    // Undo and redo replay the cancel, never the runaway.
    await ctx.prev();
    const d1 = diffViews(atStopped, await ctx.view());
    assert(d1.length === 0, `Prev to the cancelled step differs from the first visit:\n${d1.join('\n')}`);
    await ctx.prev();
    const redo = await timedNext(ctx, 2, 'Next onto the cancelled step again');
    assert(redo < 1000, `redoing the cancelled step took ${redo} ms (the runaway ran again?)`);
    const d2 = diffViews(atStopped, await ctx.view());
    assert(d2.length === 0, `redo of the cancelled step differs from the first visit:\n${d2.join('\n')}`);
    await timedNext(ctx, 3, 'Next after the redone cancel');
    const d3 = diffViews(atNext, await ctx.view());
    assert(d3.length === 0, `the step after the cancel differs on redo:\n${d3.join('\n')}`);

    // ROLLBACK ends the aborted block; b reads the unchanged row.
    await ctx.next();
    await ctx.next();
    assert(
      (await ctx.paneView('b')).tables.some((t) => JSON.stringify(t) === '[["0"]]'),
      `b after the ROLLBACK: ${JSON.stringify((await ctx.paneView('b')).tables)}`,
    );

    // The cancelled line in Russian.
    await ctx.byTestId('lang-switch').selectOption('ru');
    await ctx.prev();
    await ctx.prev();
    await ctx.prev();
    const ru = await line(ctx, 'a2');
    assert(ru.sqlstate === '57014', `the stopped line in Russian: ${JSON.stringify(ru)}`);
    await ctx.shot('cancelled-ru');

    // A reload keeps the learner's choice: playing the scenario again runs the step as cancelled.
    await ctx.page.reload();
    await waitFor(() => ctx.byTestId('lab-play').isEnabled(), 'the lab did not come back after a reload with Play enabled', 30_000);
    await ctx.byTestId('lab-play').click();
    await ctx.waitForCursor(0, 'playing the scenario again after a reload', 40_000);
    await ctx.next();
    const again = await timedNext(ctx, 2, 'Next onto the cancelled step after a reload');
    assert(again < 1000, `after a reload, the cancelled step took ${again} ms (the runaway ran again?)`);
    const reloaded = await line(ctx, 'a2');
    assert(reloaded.sqlstate === '57014', `the stopped line after a reload: ${JSON.stringify(reloaded)}`);
    ctx.assertNoConsoleErrors();
    console.log(`      runaway-step: Next after the cancel ${ms} ms, redo ${redo} ms, after a reload ${again} ms`);
  },
};

export const FLOWS: Flow[] = [runawayStep];
