/**
 * Snapshot-after-a-wait flows (issue 15): a statement whose foreign-key check waits first for a
 * lock gets the simulator's note under it, in the learner's language, once it completes.
 */
import { assert, norm, waitFor, type FlowContext } from '../harness';
import type { Flow } from '../flow';

/** Runs SQL in a session's ad-hoc input and waits until the engine is idle again. */
async function run(ctx: FlowContext, session: string, sql: string): Promise<void> {
  await ctx.submitAdHoc(session, sql);
  await waitFor(async () => !(await ctx.busy()), `ad-hoc "${sql}" in ${session} never settled`);
}

/** The text and note count of the session's last scrollback entry. */
async function lastEntry(ctx: FlowContext, session: string): Promise<{ text: string; notes: number }> {
  const entry = ctx.pane(session).getByTestId('scroll-entry').last();
  return { text: norm(await entry.innerText()), notes: await entry.getByTestId('approximation').count() };
}

const fkWaitNote: Flow = {
  name: 'fk-wait-note',
  title: 'an INSERT whose foreign-key check waited for an advisory lock completes with the simulator’s note (en, ru, dark)',
  async run(ctx) {
    await ctx.openLesson('classic-deadlock', 0);
    await run(ctx, 'A', 'CREATE TABLE sp (id int PRIMARY KEY); CREATE TABLE sk (pid int REFERENCES sp);');
    await run(ctx, 'A', 'BEGIN; SELECT pg_advisory_xact_lock(7); INSERT INTO sp VALUES (5);');
    await run(ctx, 'B', 'INSERT INTO sk SELECT 5 WHERE pg_advisory_xact_lock(7) IS NOT NULL;');
    await run(ctx, 'A', 'COMMIT;');
    await waitFor(async () => /INSERT 0 1/.test((await lastEntry(ctx, 'B')).text), 'B’s INSERT never completed after A’s COMMIT');
    const done = await lastEntry(ctx, 'B');
    assert(done.notes === 1 && /waits before its foreign-key check/.test(done.text), `no note under B’s INSERT: "${done.text}"`);
    await ctx.shot('en');
    await ctx.byTestId('lang-switch').selectOption('ru');
    await waitFor(async () => /проверкой внешнего ключа/.test((await lastEntry(ctx, 'B')).text), 'the note is not in Russian');
    await ctx.byTestId('theme-toggle').click();
    await waitFor(async () => (await ctx.page.locator('html').getAttribute('data-theme')) === 'dark', 'dark theme not applied');
    await ctx.shot('ru-dark');
    ctx.assertNoConsoleErrors();
  },
};

export const FLOWS: Flow[] = [fkWaitNote];
