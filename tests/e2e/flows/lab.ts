/**
 * The scenario lab, the watchdog and the retry lab as a learner meets their limits: drafts that are never thrown away, input limits and the parser's warnings,
 * heavy work versus runaway statements, and retry defaults and charts that tell the truth.
 */
import { assert, norm, waitFor, type FlowContext } from '../harness';
import type { Flow } from '../flow';

async function openLab(ctx: FlowContext, hash = '#/lab'): Promise<void> {
  await ctx.page.goto(ctx.url(hash));
  await waitFor(() => ctx.byTestId('lab-editor').isVisible(), `the lab editor never appeared at ${hash.slice(0, 40)}`);
}

async function importSpec(ctx: FlowContext, name: string, text: string): Promise<string> {
  await ctx.byTestId('lab-import').setInputFiles({ name, mimeType: 'text/plain', buffer: Buffer.from(text) });
  return waitFor(
    async () => ((await ctx.byTestId('lab-message').count()) ? await ctx.byTestId('lab-message').innerText() : ''),
    `no message after importing ${name}`,
  );
}

const title = (ctx: FlowContext) => ctx.byTestId('lab-title').inputValue();

const labDrafts: Flow = {
  name: 'lab-drafts',
  title: 'lab: a template, a share link and "Blank scenario" keep the replaced draft in Recent drafts (persisted); Restore brings it back',
  async run(ctx) {
    await openLab(ctx);
    await ctx.byTestId('lab-title').fill('My precious draft');
    await ctx.setSql('lab-step-sql', 0, 'BEGIN; UPDATE t SET v = 42 WHERE id = 1;');
    // A template replaces the editor; the draft must stay recoverable.
    await ctx.byTestId('lab-template').selectOption('transfer-unordered');
    await waitFor(async () => (await title(ctx)) !== 'My precious draft', 'the template did not open');
    const kept = ctx.byTestId('lab-draft-kept');
    await waitFor(() => kept.isVisible(), 'opening a template replaced the draft without keeping it (no "draft kept" notice)');
    assert((await kept.innerText()).includes('My precious draft'), `the notice names the kept draft: "${norm(await kept.innerText())}"`);
    await ctx.shot('kept');

    // A share link of another scenario, opened over the template (now the draft): kept too.
    await ctx.byTestId('lab-share').click();
    const templateLink = await ctx.byTestId('share-url').inputValue();
    await ctx.byTestId('lab-blank').click();
    await waitFor(async () => (await title(ctx)) === '', '"Blank scenario" did not empty the title');
    const items = async () => ctx.byTestId('lab-recent-item').allInnerTexts();
    await waitFor(
      async () => (await items()).length >= 2,
      `"Blank scenario" did not keep the template draft: ${JSON.stringify(await items())}`,
    );

    // The recent drafts survive a reload.
    await ctx.page.reload();
    await waitFor(() => ctx.byTestId('lab-editor').isVisible(), 'the lab did not come back after a reload');
    const after = await items();
    assert(
      after.some((t) => t.includes('My precious draft')),
      `after a reload the recent drafts are ${JSON.stringify(after)}`,
    );

    // Opening the link replaces the blank draft (nothing to keep) and loads the template.
    await ctx.page.goto(templateLink);
    await waitFor(
      async () => (await ctx.byTestId('lab-message').innerText()).includes('loaded from the link'),
      'the share link did not load',
    );

    // Restore the precious draft from the list: its title and SQL come back.
    const list = await items();
    const i = list.findIndex((t) => t.includes('My precious draft'));
    await ctx.byTestId('lab-recent-restore').nth(i).click();
    await waitFor(
      async () => (await title(ctx)) === 'My precious draft',
      `Restore #${i} of ${JSON.stringify(list)} did not bring the title back (title "${await title(ctx)}", message "${await ctx.byTestId('lab-message').innerText()}", now ${JSON.stringify(await items())})`,
    );
    const sql = norm(await ctx.byTestId('lab-step-sql').nth(0).locator('.cm-content').innerText());
    assert(sql === 'BEGIN; UPDATE t SET v = 42 WHERE id = 1;', `restored SQL: "${sql}"`);
    // What the restore replaced (the link's scenario) is kept in turn: nothing is lost either way.
    await waitFor(() => kept.isVisible(), 'restoring did not keep the scenario it replaced');
    await ctx.shot();
    // The same notice and list in Russian, dark theme.
    await ctx.setLook({ lang: 'ru', theme: 'dark' });
    await waitFor(async () => (await kept.innerText()).includes('Недавние черновики'), `Russian notice: "${await kept.innerText()}"`);
    await ctx.shot('ru-dark');
  },
};

/** A spec with `sessions` sessions of `steps` steps each (one UPDATE per step). */
function bigSpec(sessions: number, steps: number): string {
  const out = ['setup { CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 0); }'];
  for (let s = 0; s < sessions; s++) {
    out.push(`session w${s}`);
    for (let k = 0; k < steps; k++) out.push(`step w${s}_${k} { UPDATE t SET v = v + 1 WHERE id = 1; }`);
  }
  return out.join('\n') + '\n';
}

const labLimits: Flow = {
  name: 'lab-limits',
  title:
    'lab: a 240-step spec warns, invalid SQL is flagged by PostgreSQL\'s parser before Play, a huge interleaving count reads "≈ m × 10ⁿ" (localized), a 70k link is "too long"',
  async run(ctx) {
    await openLab(ctx);
    // 1. 240 steps: imported, with a warning, and not playable.
    const msg = await importSpec(ctx, 'big.spec', bigSpec(2, 120));
    assert(
      (await ctx.byTestId('lab-message').getAttribute('data-kind')) === 'warn' && /240 steps/.test(msg),
      `importing 240 steps: "${norm(msg)}"`,
    );
    const issues = await ctx.byTestId('lab-issue').allInnerTexts();
    assert(
      issues.some((t) => /240 steps/.test(t)),
      `the editor shows no step-limit problem: ${JSON.stringify(issues)}`,
    );
    assert(!(await ctx.byTestId('lab-play').isEnabled()), 'Play is enabled for a 240-step scenario');

    // 2. The interleaving count of 8 sessions × 25 steps is a 170-digit number: shown rounded.
    await importSpec(ctx, 'wide.spec', bigSpec(8, 25));
    const count = ctx.byTestId('interleavings-count');
    await waitFor(() => count.isVisible(), 'no interleaving count for the 200-step scenario');
    const exact = (await count.getAttribute('data-count')) ?? '';
    assert(exact.length > 100, `the count should be huge, data-count has ${exact.length} digits`);
    const sup = (n: number) => [...String(n)].map((d) => '⁰¹²³⁴⁵⁶⁷⁸⁹'[Number(d)]).join('');
    let tenths = Math.round(Number(exact.slice(0, 3)) / 10);
    let exp = exact.length - 1;
    if (tenths >= 100) [tenths, exp] = [10, exp + 1];
    const en = `≈ ${Math.floor(tenths / 10)}.${tenths % 10} × 10${sup(exp)}`;
    const text = await count.innerText();
    assert(text.includes(en) && !/\d{12}/.test(text), `count text: "${text}" (expected "${en}")`);
    await count.scrollIntoViewIfNeeded();
    await ctx.shot('count', true);
    await ctx.byTestId('lang-switch').selectOption('ru');
    const ru = en.replace('.', ',');
    await waitFor(
      async () => (await count.innerText()).includes(ru),
      `Russian count should read "${ru}", shows "${await count.innerText()}"`,
    );
    await ctx.shot('count-ru', true);
    await ctx.byTestId('lang-switch').selectOption('en');

    // 3. Invalid SQL is flagged by the real parser (libpg-query), with line and column, before Play.
    await ctx.byTestId('lab-blank').click();
    await ctx.setSql('lab-step-sql', 0, 'BEGIN;\nUPDAT t SET v = 1 WHERE id = 1;');
    const syntax = ctx.byTestId('lab-syntax');
    await waitFor(() => syntax.isVisible(), 'invalid step SQL is not flagged before Play');
    const said = await syntax.innerText();
    assert(/syntax error at or near "UPDAT"/.test(said) && /line 2, column 1/.test(said), `syntax warning: "${norm(said)}"`);
    assert(
      (await syntax.getAttribute('data-line')) === '2' && (await syntax.getAttribute('data-column')) === '1',
      'syntax warning position',
    );
    await ctx.shot('syntax');
    await ctx.setSql('lab-step-sql', 0, 'BEGIN; UPDATE t SET v = 1 WHERE id = 1;');
    await waitFor(async () => (await syntax.count()) === 0, 'the syntax warning stays after the SQL was fixed');

    // 4. A 70,000-character link is "too long", not "cut off".
    await ctx.page.goto(ctx.url(`#/lab?s=${'A'.repeat(70_000)}`));
    const broken = await waitFor(
      async () => ((await ctx.byTestId('lab-message').count()) ? await ctx.byTestId('lab-message').innerText() : ''),
      'no message for the 70k link',
    );
    assert(/too long/.test(broken) && !/cut/.test(broken), `70k link: "${norm(broken)}"`);
    await ctx.shot();
  },
};

const watchdogCountdown: Flow = {
  name: 'watchdog-countdown',
  title:
    'watchdog: a statement past 3 s shows a countdown; "Keep waiting" lets heavy work finish; "Stop now" stops a runaway at once and rebuilds',
  async run(ctx) {
    await ctx.openLesson('nowait', 1);
    // Heavy but finite: counting 20 million rows takes PGlite well over 3 s.
    const heavyStart = Date.now();
    await ctx.submitAdHoc('B', 'SELECT count(*) AS n FROM generate_series(1, 20000000)');
    const banner = ctx.byTestId('watchdog-countdown');
    await waitFor(() => banner.isVisible(), 'no countdown while the statement runs past the 3 s limit', 20_000);
    const left = Number(await banner.getAttribute('data-seconds-left'));
    assert(left > 0 && left <= 10, `countdown seconds left: ${left}`);
    await ctx.shot('running');
    // Keep waiting for as long as it takes (each click adds 30 s to the countdown).
    await waitFor(
      async () => {
        if (await ctx.byTestId('watchdog-keep').isVisible()) await ctx.byTestId('watchdog-keep').click();
        return JSON.stringify((await ctx.paneView('B')).tables) === '[[["20000000"]]]' && !(await ctx.busy());
      },
      `the heavy statement did not finish while the learner kept waiting: ${norm((await ctx.paneView('B')).output).slice(-200)}`,
      150_000,
      1000,
    );
    const heavyMs = Date.now() - heavyStart;
    assert((await ctx.byTestId('engine-error').count()) === 0, 'a watchdog message appeared although the learner chose to keep waiting');
    assert((await banner.count()) === 0, 'the countdown stays after the statement finished');

    // A runaway: stop it from the countdown; the rebuild follows at once, not after the countdown.
    await ctx.setLook({ lang: 'ru', theme: 'dark' });
    await ctx.submitAdHoc('B', 'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT count(*) FROM r');
    await waitFor(() => banner.isVisible(), 'no countdown for the runaway statement', 20_000);
    assert((await banner.innerText()).includes('Подождать ещё'), `Russian countdown: "${norm(await banner.innerText())}"`);
    await ctx.shot('runaway-ru-dark', true);
    const t0 = Date.now();
    await ctx.byTestId('watchdog-stop').click();
    // The countdown ends at once (the worker is stopped then, not when the countdown would run out).
    await waitFor(async () => (await banner.count()) === 0, 'the countdown stayed after "Stop now"', 1500, 50);
    const msg = await waitFor(
      async () => ((await ctx.byTestId('engine-error').count()) ? await ctx.byTestId('engine-error').innerText() : ''),
      'no message after Stop',
      // The rebuild replays the heavy statement the learner waited for: it takes as long again.
      20_000 + 2 * heavyMs,
    );
    assert(/stopped at your request/.test(msg) && /rebuilt/.test(msg), `after Stop: "${norm(msg)}"`);
    await waitFor(async () => !(await ctx.busy()), 'player still busy after Stop');
    const ms = Date.now() - t0;
    console.log(`      watchdog-countdown: stopped and rebuilt ${ms} ms after "Stop now"`);
    const states = await ctx.states();
    assert(states.A === 'idle-in-transaction', `A still holds its row after the rebuild: ${JSON.stringify(states)}`);
    await ctx.shot();
  },
};

const exploreStopped: Flow = {
  name: 'lab-explore-stopped',
  title: 'lab Explore: the one interleaving that never ends is recorded as "stopped after 10 s"; the other still runs',
  async run(ctx) {
    await openLab(ctx);
    const spec = [
      'setup { CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 0); }',
      'session a',
      'step a1 { UPDATE t SET v = 1 WHERE id = 1; }',
      'session b',
      // Endless only when a1 ran first (v = 1): a runaway in one interleaving of two.
      'step b1 { SELECT count(*) FROM generate_series(1, (SELECT CASE WHEN v = 1 THEN 100000000000 ELSE 3 END FROM t WHERE id = 1)); }',
    ].join('\n');
    await importSpec(ctx, 'runaway.spec', spec);
    await waitFor(async () => (await ctx.byTestId('interleavings-count').getAttribute('data-count')) === '2', 'expected 2 interleavings');
    await ctx.byTestId('lab-explore').click();
    const summary = ctx.byTestId('interleavings-summary');
    await waitFor(
      async () => (await summary.getAttribute('data-state')) === 'finished',
      `Explore did not finish (state ${await summary.getAttribute('data-state')})`,
      90_000,
      250,
    );
    const total = await summary.getAttribute('data-total');
    const stopped = await summary.getAttribute('data-stopped');
    const clean = await summary.getAttribute('data-clean');
    assert(total === '2' && stopped === '1' && clean === '1', `summary: total ${total}, stopped ${stopped}, clean ${clean}`);
    const rows = await ctx.byTestId('interleaving').allInnerTexts();
    assert(
      rows.some((r) => /a1 b1/.test(r) && /stopped after 10 s/.test(r)),
      `rows: ${JSON.stringify(rows.map(norm))}`,
    );
    assert(
      rows.some((r) => /b1 a1/.test(r) && /clean/i.test(r)),
      `the other interleaving ran: ${JSON.stringify(rows.map(norm))}`,
    );
    await ctx.shot();
  },
};

const retryDefaults: Flow = {
  name: 'retry-lab-defaults',
  title:
    'retry lab: NOWAIT + retry retries 55P03 by default and commits everything; charts have axis titles, integer count ticks, distinct dashes, a legend; the table fits 1440 px',
  viewport: { width: 1440, height: 900 },
  async run(ctx) {
    await ctx.page.goto(ctx.url('#/retry'));
    await waitFor(() => ctx.byTestId('retry-lab').isVisible(), 'the retry lab never appeared at #/retry');
    await ctx.byTestId('retry-workers').fill('4');
    await ctx.byTestId('retry-transactions').fill('4');
    await ctx.byTestId('retry-rows').fill('3');
    await ctx.page.locator('[data-testid="retry-strategy"][data-strategy="nowait-retry"]').check();
    const codes = await ctx.page
      .locator('[data-testid="retry-on"][data-strategy="nowait-retry"] input[type="checkbox"]')
      .evaluateAll((els) => els.filter((e) => (e as HTMLInputElement).checked).map((e) => e.getAttribute('data-code')));
    assert(codes.includes('55P03') && codes.includes('40P01'), `NOWAIT + retry retries on [${codes}] by default (the course: 55P03 too)`);
    const plain = await ctx.page
      .locator('[data-testid="retry-on"][data-strategy="unordered"] input[type="checkbox"]')
      .evaluateAll((els) => els.filter((e) => (e as HTMLInputElement).checked).map((e) => e.getAttribute('data-code')));
    assert(plain.join() === '40P01,40001', `unordered retries on [${plain}] (the course's WithRetry: 40P01, 40001)`);
    await ctx.byTestId('retry-run').click();
    await waitFor(
      async () => (await ctx.byTestId('retry-status').getAttribute('data-state')) === 'finished',
      'the sweep did not finish',
      120_000,
      250,
    );
    const nowait = await ctx.page.locator('[data-testid="retry-result"][data-strategy="nowait-retry"]').evaluateAll((els) =>
      els.map((e) => ({
        workers: Number(e.getAttribute('data-workers')),
        committed: Number(e.getAttribute('data-committed')),
        retries: Number(e.getAttribute('data-retries')),
        giveUps: Number(e.getAttribute('data-give-ups')),
      })),
    );
    // NOWAIT fails fast with 55P03; retried, nearly every transfer commits (5 attempts may still run out on 3 hot rows).
    assert(
      nowait.length === 2 &&
        nowait.every((r) => r.retries > 0 && r.committed >= r.workers * 4 * 0.9 && r.committed + r.giveUps === r.workers * 4),
      `NOWAIT + retry should retry its 55P03 and commit (nearly) every transaction: ${JSON.stringify(nowait)}`,
    );

    // Charts: titles with units, whole-number ticks on the count chart, one dash pattern per strategy, a legend.
    const figs = ctx.byTestId('retry-chart-figure');
    assert((await figs.count()) === 2, 'two charts');
    assert(
      (await ctx.byTestId('retry-x-title').count()) === 2 && (await ctx.byTestId('retry-y-title').count()) === 2,
      'each chart has x and y titles',
    );
    const yTitles = await ctx.byTestId('retry-y-title').allTextContents();
    assert(/count/.test(yTitles[0]) && /per virtual second/.test(yTitles[1]), `y titles: ${JSON.stringify(yTitles)}`);
    const ticks = await ctx.page.locator('[data-chart="deadlocks"] [data-testid="retry-y-tick"]').allTextContents();
    assert(ticks.length >= 2 && ticks.every((t) => /^\d[\d,]*$/.test(t)), `deadlock ticks must be whole numbers: ${JSON.stringify(ticks)}`);
    const dashes = await ctx.page
      .locator('[data-chart="deadlocks"] [data-testid="retry-series"]')
      .evaluateAll((els) => els.map((e) => `${e.getAttribute('data-strategy')}:${e.getAttribute('stroke-dasharray') ?? 'solid'}`));
    assert(
      dashes.length === 3 && new Set(dashes.map((d) => d.split(':')[1])).size === 3,
      `series dash patterns: ${JSON.stringify(dashes)}`,
    );
    const legend = await ctx.byTestId('retry-chart-legend').locator('li[data-strategy]').count();
    assert(legend === 3, `legend entries: ${legend}`);
    const box = await ctx.byTestId('retry-chart').first().boundingBox();
    assert(box && box.width >= 600 && box.height >= 300, `chart size ${JSON.stringify(box)}`);
    // The results table is not cut off at 1440 px.
    const fit = await ctx.page
      .locator('.scroll')
      .first()
      .evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth, right: el.getBoundingClientRect().right }));
    assert(fit.scroll <= fit.client && fit.right <= 1440, `results table: ${JSON.stringify(fit)}`);
    await ctx.shot();
    await ctx.setLook({ lang: 'ru', theme: 'dark' });
    await waitFor(
      async () => (await ctx.byTestId('retry-y-title').first().textContent())?.includes('Взаимоблокировки'),
      'Russian axis title',
    );
    const fitRu = await ctx.page
      .locator('.scroll')
      .first()
      .evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
    assert(fitRu.scroll <= fitRu.client, `results table in Russian: ${JSON.stringify(fitRu)}`);
    await ctx.shot('ru-dark');
  },
};

export const FLOWS: Flow[] = [labDrafts, labLimits, watchdogCountdown, exploreStopped, retryDefaults];
