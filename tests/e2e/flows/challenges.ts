/**
 * Challenges (#/challenges): the list, winning a "break it" challenge by choosing the sessions'
 * steps and a "fix it" challenge by editing SQL, in English and in Russian. The steps and the SQL
 * come from the challenge files; whether the challenge is won is what the engine in the page says.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../browser';
import { assert, norm, waitFor, type FlowContext } from '../harness';
import type { Flow } from '../flow';
import { loadChallenges, type Challenge } from '../../../src/scenario/challenge';

const DIR = join(ROOT, 'lessons', 'challenges');

function challenges(): Challenge[] {
  const files = Object.fromEntries(
    readdirSync(DIR)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => [f, readFileSync(join(DIR, f), 'utf8')]),
  );
  return loadChallenges(files);
}

function challenge(id: string): Challenge {
  const c = challenges().find((x) => x.id === id);
  assert(c, `no challenge ${id}`);
  return c;
}

async function openChallenge(ctx: FlowContext, c: Challenge, lang: 'en' | 'ru'): Promise<void> {
  await ctx.page.goto(ctx.url(`#/challenges/${c.id}`));
  await ctx.setLook({ lang });
  const goal = norm((await ctx.byTestId('challenge-goal').textContent()) ?? '');
  assert(goal.includes(norm(c.goalText[lang])), `goal shows "${goal}", the file says "${c.goalText[lang]}"`);
  assert((await ctx.byTestId('challenge-won').count()) === 0, `${c.id} is won before anything ran`);
}

/** Waits until the break board is not running the engine. */
async function boardReady(ctx: FlowContext): Promise<void> {
  await waitFor(async () => (await ctx.byTestId('break-board').getAttribute('aria-busy')) === 'false', 'the engine did not finish', 30_000);
}

/**
 * Plays the file's winning order by pressing each step's session button until the engine reports
 * the goal (a deadlock or an error can come before the last step); asserts it comes within the order.
 */
async function winBreak(ctx: FlowContext, c: Challenge): Promise<void> {
  const order = c.solution.order!;
  const ready = () =>
    waitFor(async () => (await ctx.byTestId('break-board').getAttribute('aria-busy')) === 'false', 'the engine did not finish', 30_000);
  await ready();
  for (const [i, step] of order.entries()) {
    if ((await ctx.byTestId('challenge-won').count()) > 0) break;
    assert(i < order.length, `${c.id}: not won after ${order.join(' ')}`);
    const session = c.sessions.find((s) => s.steps.some((st) => st.name === step))!.name;
    const button = ctx.page.locator(`[data-testid="challenge-pick"][data-session="${session}"]`);
    await waitFor(
      async () => (await button.getAttribute('data-step')) === step && (await button.isEnabled()),
      `step ${step}: the button of session ${session} is not ready`,
    );
    await button.click();
    await ready();
    const shown = norm((await ctx.byTestId('challenge-order').textContent()) ?? '');
    assert(shown === order.slice(0, i + 1).join(' '), `order shows "${shown}" after ${step}`);
    if (i === 2) await ctx.shot('midway');
  }
  await waitFor(async () => (await ctx.byTestId('challenge-won').count()) === 1, `${c.id}: not won after ${order.join(' ')}`, 30_000);
  const disabled = await ctx.byTestId('challenge-pick').evaluateAll((els) => els.every((b) => (b as HTMLButtonElement).disabled));
  assert(disabled, 'steps can still be picked after the win');
}

/** Replaces the n-th SQL editor's text by typing, as a learner would. */
async function typeSql(ctx: FlowContext, index: number, sql: string): Promise<void> {
  const content = ctx.byTestId('challenge-sql').nth(index).locator('.cm-content');
  await content.click();
  await ctx.page.keyboard.press('ControlOrMeta+A');
  await ctx.page.keyboard.press('Delete');
  await ctx.page.keyboard.insertText(sql);
  await waitFor(async () => norm((await content.innerText()) ?? '') === norm(sql), `SQL editor ${index} does not show "${sql}"`, 3000, 50);
}

/** Checks the original SQL (must fail), types the file's model SQL into the changed steps, checks again (must win). */
async function winFix(ctx: FlowContext, c: Challenge, lang: 'en' | 'ru'): Promise<void> {
  const check = ctx.byTestId('challenge-check');
  await check.click();
  await waitFor(async () => (await ctx.byTestId('challenge-verdict').count()) === 1, 'no verdict for the original SQL', 60_000);
  assert((await ctx.byTestId('challenge-verdict').getAttribute('data-won')) === 'false', `${c.id}: the original SQL passes`);
  const failText = norm((await ctx.byTestId('challenge-verdict').textContent()) ?? '');
  assert(
    lang === 'ru' ? /Не проходят \d+ из \d+/.test(failText) : /\d+ of \d+ possible orders fail/.test(failText),
    `verdict text: "${failText}"`,
  );
  await ctx.shot(`${c.id}-failing`);
  const steps = c.sessions.flatMap((s) => s.steps.map((st) => st.name));
  for (const [step, sql] of Object.entries(c.solution.steps!)) await typeSql(ctx, steps.indexOf(step), sql);
  await check.click();
  await waitFor(async () => (await ctx.byTestId('challenge-won').count()) === 1, `${c.id}: the model SQL does not win`, 60_000);
  assert((await ctx.byTestId('challenge-verdict').getAttribute('data-won')) === 'true', 'the verdict does not say won');
  assert((await ctx.byTestId('challenge-solution').count()) === 1, 'the model solution is not shown after the win');
}

/** The list shows the row as solved (progress survives a reload). */
async function assertSolvedInList(ctx: FlowContext, id: string): Promise<void> {
  await ctx.page.goto(ctx.url('#/challenges'));
  await ctx.page.reload();
  await waitFor(
    async () => (await ctx.page.locator(`[data-testid="challenge-row"][data-challenge="${id}"]`).getAttribute('data-won')) === 'true',
    `${id} is not marked solved in the list after a reload`,
  );
}

const list: Flow = {
  name: 'challenges-list',
  title: 'challenges: the list shows every challenge file with its URL, in both languages and the dark theme at 390 px',
  async run(ctx) {
    const all = challenges();
    await ctx.page.goto(ctx.url('#/'));
    await ctx.byTestId('nav-challenges').click();
    await waitFor(async () => (await ctx.byTestId('challenge-row').count()) === all.length, `expected ${all.length} challenge rows`);
    const rows = await ctx.byTestId('challenge-row').evaluateAll((els) =>
      els.map((r) => ({
        id: r.getAttribute('data-challenge'),
        href: r.querySelector('a')?.getAttribute('href'),
        title: r.querySelector('a')?.textContent?.trim(),
      })),
    );
    for (const [i, c] of all.entries()) {
      assert(rows[i]?.id === c.id, `row ${i} is ${rows[i]?.id}, expected ${c.id}`);
      assert(rows[i].href === `#/challenges/${c.id}`, `${c.id}: link ${rows[i].href}`);
      assert(norm(rows[i].title ?? '') === norm(c.title.en), `${c.id}: title "${rows[i].title}"`);
    }
    await ctx.shot('en');
    await ctx.setLook({ lang: 'ru' });
    const ruTitle = norm((await ctx.byTestId('challenge-row').first().locator('a').textContent()) ?? '');
    assert(ruTitle === norm(all[0].title.ru), `Russian title "${ruTitle}"`);
    await ctx.byTestId('theme-toggle').click();
    await ctx.page.setViewportSize({ width: 390, height: 844 });
    await ctx.shot('ru-dark-390');
    const overflow = await ctx.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert(overflow <= 0, `the list scrolls horizontally by ${overflow}px at 390 px`);
    ctx.assertNoConsoleErrors();
  },
};

const breakEn: Flow = {
  name: 'challenges-break-en',
  title: 'challenges: win "Two transfers, one deadlock" by choosing the steps (EN); progress is remembered',
  async run(ctx) {
    const c = challenge('break-transfer-deadlock');
    await openChallenge(ctx, c, 'en');
    await boardReady(ctx);
    await ctx.shot('before');
    await winBreak(ctx, c);
    const outcome = norm((await ctx.byTestId('challenge-outcome').allTextContents()).join(' '));
    assert(outcome.includes('Deadlock detected: B cancelled'), `outcome: "${outcome}"`);
    const pane = norm((await ctx.pane('B').textContent()) ?? '');
    assert(pane.includes('deadlock detected'), `session B's pane does not show the deadlock error: "${pane}"`);
    await ctx.shot('won');
    await assertSolvedInList(ctx, c.id);
    ctx.assertNoConsoleErrors();
  },
};

const breakRu: Flow = {
  name: 'challenges-break-ru',
  title: 'challenges: win "The lost update" by choosing the steps (RU, dark theme, 390 px)',
  viewport: { width: 390, height: 844 },
  async run(ctx) {
    const c = challenge('break-lost-update');
    await ctx.page.goto(ctx.url('#/challenges'));
    await ctx.byTestId('theme-toggle').click();
    await openChallenge(ctx, c, 'ru');
    await boardReady(ctx);
    await ctx.shot('before');
    await ctx.shot('before-viewport', true);
    await winBreak(ctx, c);
    const outcome = norm((await ctx.byTestId('challenge-outcome').allTextContents()).join(' '));
    assert(outcome.includes('Инвариант нарушен'), `outcome: "${outcome}"`);
    const won = norm((await ctx.byTestId('challenge-won').textContent()) ?? '');
    assert(won.includes('Получилось'), `win banner: "${won}"`);
    await ctx.shot('won');
    await ctx.byTestId('challenge-won').scrollIntoViewIfNeeded();
    await ctx.shot('won-viewport', true);
    ctx.assertNoConsoleErrors();
  },
};

const fixEn: Flow = {
  name: 'challenges-fix-en',
  title: 'challenges: win "Transfers that cannot deadlock" by editing SQL (EN)',
  async run(ctx) {
    const c = challenge('fix-transfer-order');
    await openChallenge(ctx, c, 'en');
    await winFix(ctx, c, 'en');
    await ctx.shot('won');
    await ctx.byTestId('theme-toggle').click();
    await ctx.shot('won-dark');
    await assertSolvedInList(ctx, c.id);
    ctx.assertNoConsoleErrors();
  },
};

const fixRu: Flow = {
  name: 'challenges-fix-ru',
  title: 'challenges: win "Keep every increment" by editing SQL (RU)',
  async run(ctx) {
    const c = challenge('fix-lost-update');
    await openChallenge(ctx, c, 'ru');
    await winFix(ctx, c, 'ru');
    const verdict = norm((await ctx.byTestId('challenge-verdict').textContent()) ?? '');
    assert(verdict.includes('проходят'), `verdict: "${verdict}"`);
    await ctx.shot('won');
    ctx.assertNoConsoleErrors();
  },
};

const presenter: Flow = {
  name: 'challenges-presenter',
  title: 'challenges: a three-session break board in presenter mode at 1280×720 fits the width',
  viewport: { width: 1280, height: 720 },
  async run(ctx) {
    const c = challenge('break-three-way');
    await openChallenge(ctx, c, 'en');
    await ctx.byTestId('presenter-toggle').click();
    await boardReady(ctx);
    const cols = await ctx.byTestId('challenge-session').count();
    assert(cols === 3, `${cols} session columns`);
    const overflow = await ctx.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert(overflow <= 0, `presenter mode scrolls horizontally by ${overflow}px`);
    await ctx.shot('board', true);
    ctx.assertNoConsoleErrors();
  },
};

export const FLOWS: Flow[] = [list, breakEn, breakRu, fixEn, fixRu, presenter];
