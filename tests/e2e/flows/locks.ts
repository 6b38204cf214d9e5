/**
 * #/locks (issue 14 part 2): a statement typed against the sample schema shows the locks
 * PostgreSQL (PGlite's pg_locks) holds for it, with the selected lock's matrix row lit; a
 * statement refused inside a block shows the documented answer, labelled; bad input says why.
 */
import { assert, norm, waitFor, type FlowContext } from '../harness';
import type { Flow } from '../flow';
import { LOCK_CONFLICTS } from '../../../src/engine/model/locks/modes';
import type { LockMode } from '../../../src/engine/model/locks/types';

/** Types a statement, runs it, and waits for the result or the error. */
async function ask(ctx: FlowContext, sql: string): Promise<void> {
  await ctx.byTestId('locks-input').fill(sql);
  await ctx.byTestId('locks-run').click();
  await waitFor(
    async () =>
      (await ctx.byTestId('locks-run').isEnabled()) && (await ctx.byTestId('locks-result').or(ctx.byTestId('locks-error')).count()) > 0,
    `no answer for ${sql}`,
    40_000,
  );
}

/** The lock rows shown: relation, mode and source of each. */
async function rows(ctx: FlowContext): Promise<{ relation: string | null; mode: string | null; source: string | null }[]> {
  const out = [];
  for (const r of await ctx.byTestId('locks-row').all())
    out.push({
      relation: await r.getAttribute('data-relation'),
      mode: await r.getAttribute('data-mode'),
      source: await r.getAttribute('data-source'),
    });
  return out;
}

/** The matrix row lit and the held-mode columns lit. */
async function lit(ctx: FlowContext): Promise<{ row: string[]; cols: string[] }> {
  const m = ctx.byTestId('locks-matrix');
  const row = (await m.locator('tbody tr.lit th').allInnerTexts()).map(norm);
  const cols: string[] = [];
  for (const th of await m.locator('thead th.lit').all()) cols.push((await th.getAttribute('data-mode')) ?? '');
  return { row, cols };
}

/** Checks `mode` on `relation` is shown and, once selected, lights its row and exactly its conflicts. */
async function expectLock(ctx: FlowContext, relation: string, mode: LockMode, sqlName: string): Promise<void> {
  const all = await rows(ctx);
  const at = all.findIndex((r) => r.relation === relation && r.mode === mode);
  assert(at >= 0, `no ${mode} on ${relation}: ${JSON.stringify(all)}`);
  assert(all[at]!.source === 'measured', `${mode} on ${relation} is not measured: ${JSON.stringify(all[at])}`);
  await ctx.byTestId('locks-row').nth(at).locator('button.mode').click();
  const l = await lit(ctx);
  assert(l.row.length === 1 && l.row[0] === sqlName, `lit matrix row: ${JSON.stringify(l.row)}, expected ${sqlName}`);
  const want = [...LOCK_CONFLICTS[mode]].sort();
  assert(
    JSON.stringify([...l.cols].sort()) === JSON.stringify(want),
    `lit columns ${JSON.stringify(l.cols)}, expected ${JSON.stringify(want)}`,
  );
}

const measured: Flow = {
  name: 'locks-measured',
  title: '#/locks: ALTER TABLE … ADD COLUMN holds AccessExclusiveLock and CREATE INDEX ShareLock on accounts, their conflicts lit',
  viewport: { width: 1440, height: 900 },
  timeoutMs: 120_000,
  async run(ctx) {
    await ctx.page.goto(ctx.url('#/'));
    await ctx.byTestId('nav-locks').click();
    await waitFor(() => ctx.byTestId('locks-input').isVisible(), 'the #/locks page never appeared');

    await ask(ctx, 'ALTER TABLE accounts ADD COLUMN note text');
    await expectLock(ctx, 'accounts', 'AccessExclusiveLock', 'ACCESS EXCLUSIVE');
    const everyday = await ctx.byTestId('locks-everyday').locator('li[data-waits="true"]').count();
    assert(everyday === 8, `AccessExclusiveLock blocks ${everyday} of the 8 everyday statements`);
    const alt = await ctx
      .byTestId('locks-alternatives')
      .locator('li')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-alternative')));
    assert(alt.includes('lock-timeout-retry'), `alternatives for ALTER TABLE: ${JSON.stringify(alt)}`);
    await ctx.shot('alter-en');

    await ask(ctx, 'CREATE INDEX ON accounts (balance)');
    await expectLock(ctx, 'accounts', 'ShareLock', 'SHARE');
    const waits = await ctx
      .byTestId('locks-everyday')
      .locator('li[data-waits="true"]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-everyday')));
    assert(
      waits.includes('dml') && !waits.includes('select') && !waits.includes('createIndex'),
      `ShareLock blocks: ${JSON.stringify(waits)}`,
    );
    const alt2 = await ctx
      .byTestId('locks-alternatives')
      .locator('li')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-alternative')));
    assert(alt2.includes('create-index-concurrently'), `alternatives for CREATE INDEX: ${JSON.stringify(alt2)}`);
    await ctx.shot('create-index-en');

    // An UPDATE through a foreign key: the referenced account is row-locked FOR KEY SHARE.
    await ask(ctx, 'UPDATE transfers SET from_id = 3 WHERE id = 1');
    const tuples = await ctx
      .byTestId('locks-tuple')
      .evaluateAll((els) => els.map((e) => `${e.getAttribute('data-relation')}:${e.getAttribute('data-mode')}`));
    assert(tuples.includes('accounts:ForKeyShare') && tuples.includes('transfers:NoKeyUpdate'), `row locks: ${JSON.stringify(tuples)}`);
    await ctx.shot('update-fk-en');
    ctx.assertNoConsoleErrors();
  },
};

const documented: Flow = {
  name: 'locks-documented',
  title:
    '#/locks: CREATE INDEX CONCURRENTLY shows the documented ShareUpdateExclusiveLock, labelled; a syntax error and a failing statement say why',
  viewport: { width: 1440, height: 900 },
  timeoutMs: 120_000,
  async run(ctx) {
    await ctx.page.goto(ctx.url('#/locks'));
    await ask(ctx, 'CREATE INDEX CONCURRENTLY ON accounts (balance)');
    const result = ctx.byTestId('locks-result');
    assert((await result.getAttribute('data-source')) === 'documented', 'the CONCURRENTLY answer is not labelled documented');
    const label = norm(await ctx.byTestId('locks-source').innerText());
    assert(label === 'From the documentation, not measured', `source label: "${label}"`);
    const all = await rows(ctx);
    assert(
      all.length === 1 && all[0]!.relation === 'accounts' && all[0]!.mode === 'ShareUpdateExclusiveLock' && all[0]!.source === 'documented',
      `documented rows: ${JSON.stringify(all)}`,
    );
    const text = norm(await result.innerText());
    assert(text.includes('CREATE INDEX CONCURRENTLY cannot run inside a transaction block'), `no refusal message: ${text.slice(0, 400)}`);
    assert(text.includes('13.3.1'), 'no citation of 13.3.1');
    await ctx.shot('concurrently-en');

    await ask(ctx, 'ALTER TABLE accounts ADD COLUMN');
    const syntax = norm(await ctx.byTestId('locks-error').innerText());
    assert(syntax.includes('does not parse') && syntax.includes('syntax error at end of input'), `syntax error text: "${syntax}"`);
    assert((await ctx.byTestId('locks-result').count()) === 0, 'a result is shown beside the syntax error');
    await ctx.shot('syntax-en', true);

    await ask(ctx, 'ALTER TABLE nosuch ADD COLUMN note text');
    const failed = norm(await ctx.byTestId('locks-error').innerText());
    assert(failed.includes('relation "nosuch" does not exist') && failed.includes('42P01'), `failed statement text: "${failed}"`);

    // A runaway: the watchdog's countdown appears, "Stop now" ends it, and the page goes on.
    await ctx.byTestId('locks-input').fill('WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r');
    await ctx.byTestId('locks-run').click();
    await waitFor(() => ctx.byTestId('watchdog-countdown').isVisible(), 'no countdown for the runaway statement', 20_000);
    await ctx.byTestId('watchdog-stop').click();
    await waitFor(
      async () => (await ctx.byTestId('locks-error').count()) > 0 && (await ctx.byTestId('locks-run').isEnabled()),
      'no answer after Stop',
      20_000,
    );
    const stopped = norm(await ctx.byTestId('locks-error').innerText());
    assert(stopped.includes('did not finish within') && stopped.includes('was stopped'), `runaway text: "${stopped}"`);
    await ask(ctx, 'LOCK TABLE accounts IN SHARE MODE');
    const after = await rows(ctx);
    assert(
      after.some((r) => r.relation === 'accounts' && r.mode === 'ShareLock'),
      `after the restart: ${JSON.stringify(after)}`,
    );
    ctx.assertNoConsoleErrors();
  },
};

/** Russian + dark at one width: the ALTER answer and the documented one. */
function russianDark(width: number, height: number, tag: string): Flow {
  return {
    name: `locks-ru-dark-${tag}`,
    title: `#/locks in Russian, dark theme, ${width} px: measured and documented answers`,
    viewport: { width, height },
    timeoutMs: 120_000,
    async run(ctx) {
      await ctx.page.goto(ctx.url('#/locks'));
      await ctx.byTestId('lang-switch').selectOption('ru');
      await ctx.byTestId('theme-toggle').click();
      await ask(ctx, 'ALTER TABLE accounts ADD COLUMN note text');
      await expectLock(ctx, 'accounts', 'AccessExclusiveLock', 'ACCESS EXCLUSIVE');
      const label = norm(await ctx.byTestId('locks-source').innerText());
      assert(label.startsWith('Измерено в PostgreSQL 18'), `Russian source label: "${label}"`);
      const overflow = await ctx.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert(overflow <= 0, `the page scrolls sideways by ${overflow} px`);
      await ctx.shot('alter');
      await ask(ctx, 'VACUUM FULL accounts');
      const doc = norm(await ctx.byTestId('locks-source').innerText());
      assert(doc === 'По документации, не измерено', `Russian documented label: "${doc}"`);
      const all = await rows(ctx);
      assert(all.length === 1 && all[0]!.mode === 'AccessExclusiveLock', `VACUUM FULL rows: ${JSON.stringify(all)}`);
      await ctx.shot('vacuum-full');
      ctx.assertNoConsoleErrors();
    },
  };
}

export const FLOWS: Flow[] = [measured, documented, russianDark(1440, 900, 'wide'), russianDark(390, 844, 'narrow')];
