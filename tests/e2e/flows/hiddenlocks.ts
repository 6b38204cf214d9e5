/**
 * Flows of the hidden-locks area: deadlocks-nobody-wrote played to the end, in English and in
 * Russian (dark theme), answering every checkpoint right. The victims of its three deadlocks and
 * the step each one fails at come from the lesson's expected trace (what real PostgreSQL printed).
 */
import { assert, norm, type FlowContext } from '../harness';
import type { Flow } from '../flow';
import { expectedSteps, predicts, rightAnswers } from '../lessonData';

const ID = 'deadlocks-nobody-wrote';

/** The session each 40P01 in the expected trace belongs to, in order ("b2" → "B"). */
function expectedVictims(): string[] {
  return expectedSteps(ID)
    .filter((s) => s.errors.some((e) => e.includes('deadlock detected')))
    .map((s) => s.name.replace(/_?\d+$/, '').toUpperCase());
}

/** Steps through the whole lesson; returns the sessions that became deadlock victims, in order, and takes the screenshots. */
async function playAll(ctx: FlowContext, lang: 'en' | 'ru'): Promise<string[]> {
  ctx.predictPolicy = rightAnswers(ID, lang);
  const [, total] = await ctx.position();
  const victims: string[] = [];
  const aborted = new Set<string>();
  let shotCycle = false;
  let shotVictim = false;
  for (let i = 0; i < total; i++) {
    const cursor = await ctx.next();
    const panes = await ctx.panes();
    // A session is a new victim when its pane newly shows an aborted transaction after a 40P01.
    for (const p of panes) {
      const isAborted = p.state === 'aborted' && /40P01/.test(p.output);
      if (isAborted && !aborted.has(p.session)) victims.push(p.session);
      if (isAborted) aborted.add(p.session);
      else aborted.delete(p.session);
    }
    const cycle = await ctx.page.locator('[data-testid="wfg-edge"][data-in-cycle="true"]').count();
    // The cascade scene's cycle: the second wait of the lesson's second deadlock.
    if (!shotCycle && cycle >= 2 && victims.length === 1) {
      await ctx.shot('cascade-cycle');
      shotCycle = true;
    }
    if (victims.length === 3 && !shotVictim) {
      await ctx.shot('trigger-victim');
      shotVictim = true;
    }
    assert(cursor <= total, `cursor ${cursor} past the end (${total})`);
  }
  assert(shotCycle, 'the cascade scene never showed a two-edge cycle in the wait-for graph');
  return victims;
}

/** Checks the predict checkpoints were all met and answered right. */
function checkPredicts(ctx: FlowContext): void {
  const met = ctx.predicts;
  const want = predicts(ID).map((p) => p.answer);
  assert(met.length === want.length, `met ${met.length} checkpoints, the lesson has ${want.length}`);
  assert(
    met.every((p, i) => p.choice === want[i]),
    `answers given [${met.map((p) => p.choice)}], right answers [${want}]`,
  );
}

const english: Flow = {
  name: 'deadlocks-nobody-wrote',
  title: 'upsert, cascade and trigger deadlocks: the victims real PostgreSQL chose; every checkpoint right',
  viewport: { width: 1440, height: 900 },
  async run(ctx) {
    await ctx.openLesson(ID);
    const victims = await playAll(ctx, 'en');
    const want = expectedVictims();
    assert(want.length === 3, `the expected trace has ${want.length} deadlocks, not 3`);
    assert(victims.join() === want.join(), `victims [${victims}], real PostgreSQL [${want}]`);
    checkPredicts(ctx);
    await ctx.shot();
  },
};

const russian: Flow = {
  name: 'deadlocks-nobody-wrote-ru',
  title: 'RU, dark: the same victims; the conclusion in Russian at the end',
  viewport: { width: 1440, height: 900 },
  async run(ctx) {
    await ctx.openLesson(ID);
    await ctx.setLook({ lang: 'ru', theme: 'dark' });
    const victims = await playAll(ctx, 'ru');
    assert(victims.join() === expectedVictims().join(), `victims [${victims}], real PostgreSQL [${expectedVictims()}]`);
    checkPredicts(ctx);
    const text = norm((await ctx.byTestId('narration-conclusion').textContent()) ?? '');
    assert(text.includes('Все три сцены закончились 40P01'), `the Russian conclusion is not shown at the end: «${text.slice(0, 120)}»`);
    await ctx.shot();
  },
};

export const FLOWS: Flow[] = [english, russian];
