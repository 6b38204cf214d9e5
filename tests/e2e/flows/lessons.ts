/**
 * Flows of the lessons area: the server-log exercise (read-the-server-log) played to its deadlock
 * with the wait-for graph hidden, checking the log_lock_waits lines the engine wrote, in English
 * and in Russian.
 */
import { assert, norm, waitFor, type FlowContext } from '../harness';
import type { Flow } from '../flow';
import { predicts, rightAnswers } from '../lessonData';

const ID = 'read-the-server-log';

/** The pid each session pane shows. */
async function pids(ctx: FlowContext): Promise<Record<string, string>> {
  const panes = await ctx.panes();
  return Object.fromEntries(panes.map((p) => [p.session, /(\d+)/.exec(p.ids)?.[1] ?? '?']));
}

/** Steps to C's 40P01 and checks the log and the hidden panels; then to the end, where the graph is back. */
async function playToDeadlock(ctx: FlowContext, lang: 'en' | 'ru'): Promise<void> {
  ctx.predictPolicy = rightAnswers(ID, lang);
  const [, total] = await ctx.position();
  let victim: string | null = null;
  let deadlockAt = -1;
  const seen: string[] = [];
  for (let i = 0; i < total && victim === null; i++) {
    const cursor = await ctx.next();
    seen.push(`${cursor}: ${(await ctx.panes()).map((p) => `${p.session}=${p.state} [${norm(p.output).slice(-80)}]`).join(' ')}`);
    const hidden = await ctx.page
      .locator('[data-testid="hidden-panel"]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-panel')));
    assert(
      hidden.includes('wait-graph') && hidden.includes('pg-locks') && hidden.includes('lock-matrix'),
      `at step ${cursor} of ${total} the lesson should hide the graph, pg_locks and the matrix; hidden: [${hidden}]\n${seen.join('\n')}`,
    );
    assert((await ctx.page.locator('[data-testid="wfg-node"]').count()) === 0, 'a wait-for graph node is drawn while the graph is hidden');
    for (const w of await ctx.page.locator('[data-testid="wait-text"]').allTextContents())
      assert(!/session [ABC]|сеанс|сесси/.test(w), `a pane names whom it waits for while the lesson hides it: "${norm(w)}"`);
    victim = (await ctx.panes()).find((p) => /SQLSTATE:\s+40P01/.test(p.output))?.session ?? null;
    if (victim) deadlockAt = cursor;
  }
  assert(
    victim === 'C',
    `victim is ${victim}; real PostgreSQL cancels C (read-the-server-log.expected.txt); states by step:\n${seen.join('\n')}`,
  );
  const pid = await pids(ctx);
  const log = (await ctx.byTestId('server-log').textContent()) ?? '';
  const lines: [RegExp, string][] = [
    [
      new RegExp(`\\[${pid.A}\\] LOG:  process ${pid.A} still waiting for ShareLock on transaction \\d+ after 1000\\.000 ms`),
      "A's still-waiting line",
    ],
    [new RegExp(`\\[${pid.A}\\] DETAIL:  Process holding the lock: ${pid.B}\\. Wait queue: ${pid.A}\\.`), "A's holder (B) and wait queue"],
    [new RegExp(`\\[${pid.A}\\] CONTEXT:  while updating tuple \\(0,2\\) in relation "accounts"`), "A's CONTEXT"],
    [new RegExp(`\\[${pid.B}\\] DETAIL:  Process holding the lock: ${pid.C}\\. Wait queue: ${pid.B}\\.`), "B's holder (C)"],
    [
      new RegExp(
        `\\[${pid.C}\\] LOG:  process ${pid.C} detected deadlock while waiting for ShareLock on transaction \\d+ after 1000\\.000 ms`,
      ),
      "C's detected-deadlock line",
    ],
    [new RegExp(`\\[${pid.C}\\] ERROR:  deadlock detected`), 'the ERROR'],
    [new RegExp(`Process ${pid.C}: UPDATE accounts SET balance = balance \\+ 1 WHERE id = 1;`), "the report's statement line for C"],
    [new RegExp(`\\[${pid.B}\\] LOG:  process ${pid.B} acquired ShareLock on transaction \\d+ after 2500\\.000 ms`), "B's acquired line"],
  ];
  for (const [re, what] of lines) assert(re.test(log), `server log lacks ${what} (${re}):\n${log.slice(0, 1500)}`);
  const note = norm((await ctx.page.locator('[data-testid="hidden-panel"][data-panel="wait-graph"]').textContent()) ?? '');
  assert(
    lang === 'ru' ? /Скрыто до последнего шага урока: Граф ожиданий/.test(note) : /Wait-for graph: hidden/.test(note),
    `hidden-graph note in ${lang}: "${note}"`,
  );
  await ctx.shot('deadlock');
  // To the end: the hidden panels come back.
  for (let [cursor, end] = await ctx.position(); cursor < end; [cursor, end] = await ctx.position()) await ctx.next();
  await waitFor(
    async () => (await ctx.page.locator('[data-testid="hidden-panel"]').count()) === 0,
    'the hidden panels did not come back at the end',
  );
  assert((await ctx.page.locator('[data-testid="wfg-node"]').count()) > 0, 'no wait-for graph nodes at the end of the lesson');
  assert(ctx.predicts.length === predicts(ID).length, `answered ${ctx.predicts.length} of ${predicts(ID).length} checkpoints`);
  // Stepping back to the deadlock keeps the panels shown: the graph has the cycle's edges again.
  for (let [cursor] = await ctx.position(); cursor > deadlockAt; [cursor] = await ctx.position()) await ctx.prev();
  assert((await ctx.page.locator('[data-testid="hidden-panel"]').count()) === 0, 'the panels were hidden again after stepping back');
  await ctx.shot('end');
  ctx.assertNoConsoleErrors();
}

const serverLogLesson: Flow = {
  name: 'server-log-lesson',
  title: 'EN: read-the-server-log to its deadlock with the graph hidden; log_lock_waits lines in the server log',
  async run(ctx) {
    await ctx.openLesson(ID);
    await playToDeadlock(ctx, 'en');
  },
};

const serverLogLessonRu: Flow = {
  name: 'server-log-lesson-ru',
  title: 'RU: the same exercise in Russian; the log stays PostgreSQL-worded',
  async run(ctx) {
    await ctx.openLesson(ID);
    await ctx.byTestId('lang-switch').selectOption('ru');
    await waitFor(async () => (await ctx.page.evaluate(() => document.documentElement.lang)) === 'ru', '<html lang> did not become "ru"');
    await playToDeadlock(ctx, 'ru');
  },
};

export const FLOWS: Flow[] = [serverLogLesson, serverLogLessonRu];
