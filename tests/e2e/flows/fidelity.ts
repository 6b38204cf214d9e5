/**
 * Fidelity flows (issue 15, item 12): where a step touches something the simulator approximates,
 * the session pane says so under the step, in the learner's language, and says nothing for a
 * step that does not.
 */
import { assert, norm, waitFor, type FlowContext } from '../harness';
import type { Flow } from '../flow';

/** Runs SQL in the session's ad-hoc input and returns the text of the scrollback entry it left. */
async function adHocEntry(ctx: FlowContext, session: string, sql: string): Promise<{ text: string; notes: number }> {
  const entries = ctx.pane(session).getByTestId('scroll-entry');
  const before = await entries.count();
  await ctx.submitAdHoc(session, sql);
  await waitFor(
    async () => (await entries.count()) === before + 1 && !(await ctx.busy()),
    `ad-hoc "${sql}" in ${session} left no entry in its scrollback`,
  );
  const entry = entries.nth(before);
  return { text: norm(await entry.innerText()), notes: await entry.getByTestId('approximation').count() };
}

/**
 * Runs a DO block in `session` that waits for advisory lock 77 (held by session A) inside a block
 * with an EXCEPTION clause, lets the clock run to its lock_timeout, and returns the text and notes
 * of the entry it left: the engine cannot raise that timeout inside the block (there is no row to
 * raise it at), so the step says so.
 */
async function uncaughtInBlock(ctx: FlowContext, session: string): Promise<{ text: string; notes: number }> {
  const entries = ctx.pane(session).getByTestId('scroll-entry');
  await ctx.submitAdHoc(session, 'DO $$ BEGIN PERFORM pg_advisory_xact_lock(77); EXCEPTION WHEN lock_not_available THEN NULL; END $$;');
  await waitFor(
    async () => !(await ctx.busy()) && (await ctx.states())[session] === 'waiting',
    `${session} did not wait for advisory lock 77 inside the DO block`,
  );
  await ctx.byTestId('advance-timer').click();
  await waitFor(
    async () => !(await ctx.busy()) && (await ctx.states())[session] !== 'waiting',
    `the lock_timeout did not end ${session}'s wait`,
  );
  const entry = entries.last();
  return { text: norm(await entry.innerText()), notes: await entry.getByTestId('approximation').count() };
}

const approximationNote: Flow = {
  name: 'approximation-note',
  title:
    'a temporary table, a lock_timeout the engine cannot raise inside a PL/pgSQL EXCEPTION block and SERIALIZABLE READ ONLY DEFERRABLE get the simulator’s note in the pane (en, ru, dark); READ ONLY alone (ported), a plain statement and a block that does not wait get none',
  async run(ctx) {
    await ctx.openLesson('classic-deadlock', 0);
    const plain = await adHocEntry(ctx, 'A', 'SELECT 1;');
    assert(plain.notes === 0, `a plain SELECT got an approximation note: "${plain.text}"`);
    const temp = await adHocEntry(ctx, 'A', 'CREATE TEMP TABLE scratch (a int);');
    assert(
      temp.notes === 1 && /Lockstep: temporary tables are approximated/.test(temp.text),
      `no note under CREATE TEMP TABLE: "${temp.text}"`,
    );
    // A block that never waits has nothing to catch: its rows are tracked, and no note is shown.
    const quiet = await adHocEntry(ctx, 'A', 'DO $$ BEGIN PERFORM 1; EXCEPTION WHEN others THEN NULL; END $$;');
    assert(quiet.notes === 0, `a note under a DO block that did not wait: "${quiet.text}"`);
    await adHocEntry(ctx, 'A', 'SELECT pg_advisory_lock(77);');
    await adHocEntry(ctx, 'B', "SET lock_timeout = '100ms';");
    const guarded = await uncaughtInBlock(ctx, 'B');
    assert(
      guarded.notes === 1 && /PL\/pgSQL block with an EXCEPTION clause/.test(guarded.text) && /55P03/.test(guarded.text),
      `no note under the DO block whose lock_timeout is shown uncaught: "${guarded.text}"`,
    );
    await ctx.shot('en');
    await ctx.byTestId('lang-switch').selectOption('ru');
    const guardedRu = await uncaughtInBlock(ctx, 'B');
    assert(
      guardedRu.notes === 1 && /блок PL\/pgSQL с предложением EXCEPTION/.test(guardedRu.text),
      `no Russian note under the DO block whose lock_timeout is shown uncaught: "${guardedRu.text}"`,
    );
    // READ ONLY is ported (predicate.c's read-only optimisations); only DEFERRABLE's wait is not.
    const ro = await adHocEntry(ctx, 'B', 'BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY;');
    assert(ro.notes === 0, `a note under BEGIN … READ ONLY, which is modelled: "${ro.text}"`);
    await adHocEntry(ctx, 'B', 'COMMIT;');
    const deferrable = await adHocEntry(ctx, 'B', 'BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY DEFERRABLE;');
    assert(
      deferrable.notes === 1 && /DEFERRABLE для транзакций SERIALIZABLE READ ONLY не моделируется/.test(deferrable.text),
      `no Russian note under BEGIN … DEFERRABLE: "${deferrable.text}"`,
    );
    await ctx.byTestId('theme-toggle').click();
    await waitFor(async () => (await ctx.page.locator('html').getAttribute('data-theme')) === 'dark', 'dark theme not applied');
    await ctx.shot('ru-dark');
    ctx.assertNoConsoleErrors();
  },
};

export const FLOWS: Flow[] = [approximationNote];
