/**
 * `#/explain` (issue 14, part 1): a pasted deadlock report becomes the player's wait-for graph with
 * its victim, the rebuilt scenario plays to the same 40P01 in the lab, a three-process report gives
 * a three-node cycle, and what is not a report gets a message saying what was and was not understood.
 */
import { assert, norm, waitFor, type FlowContext } from '../harness';
import type { Flow } from '../flow';
import { SAMPLE_THREE, SAMPLE_TWO_TRANSFERS } from '../../../src/explain/samples';

async function setLang(ctx: FlowContext, lang: 'en' | 'ru'): Promise<void> {
  await ctx.byTestId('lang-switch').selectOption(lang);
  await waitFor(async () => (await ctx.page.evaluate(() => document.documentElement.lang)) === lang, `<html lang> is not "${lang}"`);
}

async function openExplain(ctx: FlowContext): Promise<void> {
  await ctx.page.goto(ctx.url('#/explain'));
  await waitFor(() => ctx.byTestId('explain-input').isVisible(), 'the explain page never showed its textarea');
}

/** Pastes a log and presses Explain; resolves once the page has answered (a graph or a message). */
async function explain(ctx: FlowContext, text: string): Promise<void> {
  await ctx.byTestId('explain-input').fill(text);
  await ctx.byTestId('explain-run').click();
  await waitFor(
    async () => (await ctx.byTestId('explain-graph').count()) + (await ctx.byTestId('explain-error').count()) > 0,
    'the explain page showed neither a graph nor a message',
  );
}

/** The first report's graph: its session nodes, the victim and the edges. */
async function graph(ctx: FlowContext) {
  const g = ctx.byTestId('explain-graph').first();
  await waitFor(async () => (await g.getByTestId('wfg-node').count()) > 0, 'the explain graph has no nodes');
  const nodes = await g.getByTestId('wfg-node').evaluateAll((els) => els.map((e) => e.getAttribute('data-session')));
  const victims = await g
    .locator('[data-testid="wfg-node"][data-victim="true"]')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-session')));
  const edges = await g
    .getByTestId('wfg-edge')
    .evaluateAll((els) =>
      els
        .map(
          (e) =>
            `${e.getAttribute('data-from')}->${e.getAttribute('data-to')}${e.getAttribute('data-in-cycle') === 'true' ? ' (cycle)' : ''}`,
        )
        .sort(),
    );
  return { nodes, victims, edges };
}

const explainTwo: Flow = {
  name: 'explain-two',
  title:
    "explain: the course's two-transfer report (timestamp prefix) → a two-node cycle with the victim; rebuilt, it plays to 40P01 in the lab",
  viewport: { width: 1440, height: 900 },
  timeoutMs: 180_000,
  async run(ctx) {
    const requests: string[] = [];
    ctx.page.on('request', (r) => requests.push(`${r.method()} ${r.url()} ${r.postData() ?? ''}`));
    await openExplain(ctx);
    await explain(ctx, SAMPLE_TWO_TRANSFERS);
    const g = await graph(ctx);
    assert(g.nodes.join() === 'A,B', `nodes: ${g.nodes}`);
    assert(g.victims.join() === 'A', `victim: ${g.victims} (pid 1234 got the ERROR)`);
    assert(g.edges.join() === 'A->B (cycle),B->A (cycle)', `edges: ${g.edges}`);
    assert((await ctx.byTestId('explain-error').count()) === 0, 'a complete report shows no error');
    const words = norm(await ctx.byTestId('explain-edges').first().innerText());
    assert(
      words.includes("A waits for B's transaction to end: B updated or locked a row A needs (row (0,5) of accounts, from CONTEXT)"),
      `edge words: ${words}`,
    );
    const cause = ctx.byTestId('explain-cause').first();
    assert((await cause.getAttribute('data-cause')) === 'opposite-order', `cause: ${await cause.getAttribute('data-cause')}`);
    assert((await ctx.byTestId('explain-lesson').first().getAttribute('href')) === '#/lessons/ordered-locking', 'the fix links the lesson');
    const procs = await ctx.byTestId('explain-process').allInnerTexts();
    assert(procs.length === 2 && /pid 1234/.test(procs[0]) && /WHERE id = 2/.test(procs[0]), `processes: ${procs.map(norm)}`);
    // Nothing pasted leaves the page: no request carries the log or goes to another origin.
    const origin = new URL(ctx.url('#/')).origin;
    const leaks = requests.filter((r) => r.includes('1234') || r.includes('deadlock') || !r.split(' ')[1].startsWith(origin));
    assert(leaks.length === 0, `requests after pasting: ${leaks.join('\n')}`);
    await ctx.shot('two');

    await ctx.byTestId('explain-rebuild').first().click();
    await waitFor(() => ctx.byTestId('lab-editor').isVisible(), 'the rebuild did not open the lab');
    await waitFor(
      async () =>
        /loaded from the link/.test(
          (await ctx
            .byTestId('lab-message')
            .textContent()
            .catch(() => '')) ?? '',
        ),
      'the lab did not load the rebuilt scenario',
    );
    await waitFor(
      async () => (await ctx.byTestId('lab-issue').count()) === 0 && (await ctx.byTestId('lab-play').isEnabled()),
      `the rebuilt scenario has problems: ${JSON.stringify(await ctx.byTestId('lab-issue').allInnerTexts())}`,
    );
    await ctx.shot('rebuilt-in-lab');
    await ctx.byTestId('lab-play').click();
    await ctx.waitForCursor(0, 'opening the rebuilt scenario in the lab player', 40_000);
    const [, total] = await ctx.position();
    assert(total === 6, `the rebuilt scenario has ${total} steps, expected 6 (a1 b1 a2 b2 a3 b3)`);
    while ((await ctx.position())[0] < 4) await ctx.next();
    const edges = await ctx.edges();
    assert(edges.includes('A->B (cycle)') && edges.includes('B->A (cycle)'), `after a2 b2 the lab shows the cycle: ${edges}`);
    await ctx.byTestId('advance-timer').click();
    const victim = await waitFor(
      async () => ((await ctx.busy()) ? null : ((await ctx.panes()).find((p) => /SQLSTATE:\s+40P01/.test(p.output))?.session ?? null)),
      'the rebuilt scenario did not end in 40P01',
    );
    assert(victim === 'A', `the replay's victim is ${victim}; the log's victim is A (pid 1234)`);
    await ctx.shot('replayed-40P01');
  },
};

const explainThree: Flow = {
  name: 'explain-three',
  title: 'explain: a three-process report → a three-node cycle, each edge and statement, the victim',
  viewport: { width: 1440, height: 900 },
  async run(ctx) {
    await openExplain(ctx);
    // log_lock_waits lines before the report, as the server writes them one deadlock_timeout into each wait.
    const waits = [
      '2026-12-01 10:20:39.100 UTC [302] app@bank LOG:  process 302 still waiting for ShareLock on transaction 901 after 1000.081 ms',
      '2026-12-01 10:20:39.100 UTC [302] app@bank DETAIL:  Process holding the lock: 303. Wait queue: 302.',
      '2026-12-01 10:20:39.100 UTC [302] app@bank CONTEXT:  while updating tuple (0,3) in relation "accounts"',
      '2026-12-01 10:20:39.100 UTC [302] app@bank STATEMENT:  UPDATE accounts SET balance = balance + 1 WHERE id = 3;',
    ];
    await explain(ctx, [...waits, SAMPLE_THREE].join('\n'));
    const g = await graph(ctx);
    assert(g.nodes.join() === 'A,B,C', `nodes: ${g.nodes}`);
    const lockWaits = await ctx.byTestId('explain-lock-waits').locator('li').allInnerTexts();
    assert(
      lockWaits.length === 1 &&
        /process 302 still waiting for ShareLock on transaction 901 after 1000\.081 ms.*held by 303/.test(norm(lockWaits[0])),
      `lock waits: ${lockWaits.map(norm)}`,
    );
    assert(g.victims.join() === 'A', `victim: ${g.victims}`);
    assert(g.edges.join() === 'A->B (cycle),B->C (cycle),C->A (cycle)', `edges: ${g.edges}`);
    assert((await ctx.byTestId('explain-process').count()) === 3, 'three processes listed');
    const meta = norm(await ctx.byTestId('explain-report-title').first().innerText());
    assert(/app@bank/.test(meta) && /10:20:41/.test(meta), `report heading names the prefix's time and user@db: ${meta}`);
    await ctx.shot('three');
    await ctx.page.setViewportSize({ width: 1280, height: 720 });
    await ctx.byTestId('presenter-toggle').click();
    await ctx.byTestId('explain-graph').first().scrollIntoViewIfNeeded();
    await ctx.shot('three-presenter', true);
  },
};

const explainBad: Flow = {
  name: 'explain-bad-input',
  title: 'explain: garbage, a client one-liner, a cut report and MySQL each get a message saying what was understood',
  viewport: { width: 1440, height: 900 },
  async run(ctx) {
    await openExplain(ctx);
    const cases: { text: string; expect: RegExp }[] = [
      { text: 'hello\nmy app is slow, please help', expect: /none of the 2 lines are a PostgreSQL deadlock report/ },
      {
        text: '2026/12/01 10:15:02 transfer failed: ERROR: deadlock detected (SQLSTATE 40P01)',
        expect: /40P01.*server log has the whole report/,
      },
      { text: SAMPLE_TWO_TRANSFERS.split('\n').slice(0, 2).join('\n'), expect: /cut short.*do not close a cycle/ },
      {
        text: 'ERROR 1213 (40001): Deadlock found when trying to get lock; try restarting transaction',
        expect: /MySQL's deadlock message/,
      },
    ];
    for (const c of cases) {
      await explain(ctx, c.text);
      const msg = await waitFor(
        async () => ((await ctx.byTestId('explain-error').count()) ? norm(await ctx.byTestId('explain-error').innerText()) : ''),
        `no explain-error for ${c.text.slice(0, 40)}`,
      );
      assert(c.expect.test(msg), `for «${c.text.slice(0, 50)}» the message is «${msg}»`);
    }
    await explain(ctx, 'hello\nmy app is slow, please help');
    assert((await ctx.byTestId('explain-graph').count()) === 0, 'garbage draws no graph');
    await ctx.shot('garbage');
  },
};

const explainRuDark: Flow = {
  name: 'explain-ru-dark',
  title: 'explain: Russian, dark theme, 390 px and 1440 px wide',
  viewport: { width: 390, height: 844 },
  async run(ctx) {
    await openExplain(ctx);
    await setLang(ctx, 'ru');
    await ctx.byTestId('theme-toggle').click();
    await explain(ctx, SAMPLE_TWO_TRANSFERS);
    const g = await graph(ctx);
    assert(g.victims.join() === 'A' && g.nodes.length === 2, `RU graph: ${JSON.stringify(g)}`);
    const cause = norm(await ctx.byTestId('explain-cause').first().innerText());
    assert(/в разном порядке/.test(cause) && /Как исправить/.test(cause), `Russian cause: ${cause}`);
    const nav = norm(await ctx.byTestId('nav-explain').innerText());
    assert(nav === 'Разбор лога', `nav: ${nav}`);
    const overflow = await ctx.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert(overflow <= 0, `the page scrolls sideways by ${overflow} px at 390 px`);
    await ctx.shot('ru-dark-390');
    await ctx.byTestId('explain-graph').first().scrollIntoViewIfNeeded();
    await ctx.shot('ru-dark-390-graph', true);
    await ctx.byTestId('explain-cause').first().scrollIntoViewIfNeeded();
    await ctx.shot('ru-dark-390-cause', true);
    await explain(ctx, 'просто текст');
    assert(/Не понято/.test(norm(await ctx.byTestId('explain-error').innerText())), 'Russian message for garbage');
    await ctx.page.setViewportSize({ width: 1440, height: 900 });
    await explain(ctx, SAMPLE_THREE);
    await graph(ctx);
    await ctx.shot('ru-dark-1440');
  },
};

const explainFix: Flow = {
  name: 'explain-fix-explore',
  title: 'explain: the two transfers with the fix applied open in the lab, and its explorer finds no order that deadlocks',
  viewport: { width: 1440, height: 900 },
  timeoutMs: 180_000,
  async run(ctx) {
    await openExplain(ctx);
    await explain(ctx, SAMPLE_TWO_TRANSFERS);
    await ctx.byTestId('explain-rebuild-fixed').first().click();
    await waitFor(
      async () =>
        /loaded from the link/.test(
          (await ctx
            .byTestId('lab-message')
            .textContent()
            .catch(() => '')) ?? '',
        ),
      'the lab did not load the fixed scenario',
    );
    await waitFor(
      async () => (await ctx.byTestId('lab-issue').count()) === 0 && (await ctx.byTestId('lab-play').isEnabled()),
      'the fixed scenario has problems',
    );
    const count = Number(await ctx.byTestId('interleavings-count').getAttribute('data-count'));
    assert(count === 20, `the fixed scenario has ${count} interleavings, expected 20 (3 steps per session)`);
    await ctx.byTestId('lab-explore').click();
    const summary = ctx.byTestId('interleavings-summary');
    await waitFor(async () => (await summary.getAttribute('data-state')) === 'finished', 'exploration did not finish', 120_000, 200);
    const n = async (attr: string) => Number(await summary.getAttribute(attr));
    const r = { total: await n('data-total'), deadlocks: await n('data-deadlocks'), errors: await n('data-errors') };
    assert(r.total === 20 && r.deadlocks === 0 && r.errors === 0, `the fix explored: ${JSON.stringify(r)}`);
    await ctx.byTestId('interleavings-summary').scrollIntoViewIfNeeded();
    await ctx.shot('fix-explored', true);
  },
};

export const FLOWS: Flow[] = [explainTwo, explainThree, explainBad, explainRuDark, explainFix];
