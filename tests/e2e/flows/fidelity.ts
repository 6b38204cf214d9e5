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

const approximationNote: Flow = {
  name: 'approximation-note',
  title:
    'a temporary table, a PL/pgSQL EXCEPTION block and SERIALIZABLE READ ONLY DEFERRABLE get the simulator’s note in the pane (en, ru, dark); READ ONLY alone (ported) and a plain statement get none',
  async run(ctx) {
    await ctx.openLesson('classic-deadlock', 0);
    const plain = await adHocEntry(ctx, 'A', 'SELECT 1;');
    assert(plain.notes === 0, `a plain SELECT got an approximation note: "${plain.text}"`);
    const temp = await adHocEntry(ctx, 'A', 'CREATE TEMP TABLE scratch (a int);');
    assert(
      temp.notes === 1 && /Lockstep: temporary tables are approximated/.test(temp.text),
      `no note under CREATE TEMP TABLE: "${temp.text}"`,
    );
    const guarded = await adHocEntry(ctx, 'A', 'DO $$ BEGIN PERFORM 1; EXCEPTION WHEN others THEN NULL; END $$;');
    assert(
      guarded.notes === 1 && /PL\/pgSQL block with an EXCEPTION clause/.test(guarded.text),
      `no note under a DO block with EXCEPTION: "${guarded.text}"`,
    );
    await ctx.shot('en');
    await ctx.byTestId('lang-switch').selectOption('ru');
    const guardedRu = await adHocEntry(ctx, 'B', 'DO $$ BEGIN PERFORM 2; EXCEPTION WHEN others THEN NULL; END $$;');
    assert(
      guardedRu.notes === 1 && /блок PL\/pgSQL с предложением EXCEPTION/.test(guardedRu.text),
      `no Russian note under a DO block with EXCEPTION: "${guardedRu.text}"`,
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
