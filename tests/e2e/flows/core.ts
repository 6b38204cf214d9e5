/**
 * The original e2e flows. Each runs in a fresh browser context against the production build and
 * asserts only on what the real engine (PGlite in the Web Worker) produced, through the real UI.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { parse as parseYaml } from 'yaml';
import { ROOT } from '../browser';
import { assert, diffViews, norm, waitFor, type FlowContext } from '../harness';
import type { Flow } from '../flow';
import { LESSONS, expectedSteps, lessonIds, lessonYaml, predicts, rightAnswers, scriptItems, type LessonYaml } from '../lessonData';

// ---------------------------------------------------------------------------------------------

const home: Flow = {
  name: 'home',
  title: 'lesson list shows every bundled lesson, no console errors',
  async run(ctx) {
    await ctx.page.goto(ctx.url('#/'));
    const ids = lessonIds();
    await waitFor(
      async () => (await ctx.byTestId('lesson-row').count()) === ids.length,
      `expected ${ids.length} lesson rows (one per lessons/*.yaml)`,
    );
    const rows = await ctx.byTestId('lesson-row').evaluateAll((els) =>
      els.map((r) => ({
        id: r.getAttribute('data-lesson') ?? '',
        title: r.querySelector('a')?.textContent?.trim() ?? '',
        href: r.querySelector('a')?.getAttribute('href') ?? '',
      })),
    );
    for (const id of ids) {
      const row = rows.find((r) => r.id === id);
      assert(row, `lesson ${id} missing from the lesson list`);
      const title = lessonYaml(id).title.en;
      assert(norm(row.title) === norm(title), `lesson ${id}: list shows "${row.title}", YAML title is "${title}"`);
      assert(row.href === `#/lessons/${id}/step/0`, `lesson ${id}: link is "${row.href}"`);
    }
    assert(
      (await ctx.byTestId('engine-not-connected').count()) === 0,
      'the "engine not connected" banner is shown in the production build',
    );
    // The link really opens the player with the engine behind it.
    await ctx.shot();
    await ctx.page.locator('[data-testid="lesson-row"][data-lesson="classic-deadlock"] a').click();
    await ctx.waitForCursor(0, 'opening classic-deadlock from the list', 40_000);
    await ctx.expectUrl('#/lessons/classic-deadlock/step/0', 'after clicking the lesson');
    const title = await ctx.page.locator('.player h2').textContent();
    assert(norm(title ?? '') === norm(lessonYaml('classic-deadlock').title.en), `player title: "${title}"`);
  },
};

const classicDeadlock: Flow = {
  name: 'classic-deadlock',
  title: 'EN: steps to 40P01; cycle, lit matrix cell, victim, DETAIL, server log; broken-cycle edges',
  async run(ctx) {
    // Answer every predict checkpoint with the YAML's right answer, matched by its question.
    const checkpoints = predicts('classic-deadlock');
    ctx.predictPolicy = rightAnswers('classic-deadlock');
    await ctx.openLesson('classic-deadlock');
    const [, total] = await ctx.position();
    let sawCycleAt = -1;
    let victim: string | null = null;
    let deadlockAt = -1;
    let ids: Record<string, { pid: string; xid: string }> = {};
    for (let i = 0; i < total && victim === null; i++) {
      const cursor = await ctx.next();
      const panes = await ctx.panes();
      const waiting = panes.filter((p) => p.state === 'waiting').map((p) => p.session);
      if (waiting.includes('A') && waiting.includes('B') && sawCycleAt < 0) {
        sawCycleAt = cursor;
        const edges = await ctx.edges();
        assert(
          edges.includes('A->B (cycle)') && edges.includes('B->A (cycle)'),
          `both sessions wait, but the wait-for graph does not show the A→B→A cycle: [${edges}]`,
        );
        const lit = ctx.page.locator(
          '[data-testid="lock-matrix-table"] [data-testid="matrix-cell"][data-requested="ShareLock"][data-held="ExclusiveLock"]',
        );
        assert(
          (await lit.getAttribute('data-conflict')) === 'true',
          'table-level matrix: cell ShareLock requested vs ExclusiveLock held is not lit (data-conflict="true") while both wait',
        );
        for (const s of ['A', 'B']) {
          const wt = (await ctx.pane(s).getByTestId('wait-text').textContent()) ?? '';
          assert(/waits for ShareLock on transaction \d+/.test(wt), `session ${s} wait text: "${norm(wt)}"`);
        }
        const lockRows = await ctx.page.locator('[data-testid="lock-table"] tr[data-granted="false"]').allInnerTexts();
        assert(
          lockRows.length === 2 && lockRows.every((r) => /transactionid/.test(r) && /ShareLock/.test(r)),
          `pg_locks should show two ungranted transactionid ShareLocks, got: ${JSON.stringify(lockRows)}`,
        );
        ids = Object.fromEntries(
          panes
            .filter((p) => p.session === 'A' || p.session === 'B')
            .map((p) => [p.session, { pid: /pid (\d+)/.exec(p.ids)?.[1] ?? '?', xid: /xid (\d+)/.exec(p.ids)?.[1] ?? '?' }]),
        );
        await ctx.shot('cycle');
      }
      const hit = panes.find((p) => /SQLSTATE:\s+40P01/.test(p.output));
      if (hit) {
        victim = hit.session;
        deadlockAt = cursor;
      }
    }
    assert(victim !== null, 'no session ever showed SQLSTATE 40P01 while stepping through the whole lesson');
    assert(
      ctx.predicts.length === checkpoints.length && ctx.predicts.every((p) => p.choice !== null),
      `expected to answer all ${checkpoints.length} predict checkpoints on the way to the deadlock, answered ${JSON.stringify(ctx.predicts)}`,
    );
    const verdict = await ctx.byTestId('predict-result').getAttribute('data-verdict');
    assert(verdict === 'right', `after the predicted step ran, predict-result shows verdict "${verdict}" for the right answer`);
    const explanation = norm((await ctx.byTestId('predict-explanation').textContent()) ?? '');
    assert(
      checkpoints.some((p) => norm(p.explanation.en) === explanation),
      `predict explanation "${explanation.slice(0, 80)}" is not the YAML's`,
    );
    // The lesson's internal pause session never shows.
    const shownSessions = (await ctx.panes()).map((p) => p.session);
    assert(shownSessions.join() === 'A,B', `session panes: [${shownSessions}] (the pause session "clock" must stay hidden)`);
    assert(
      sawCycleAt > 0 && sawCycleAt < deadlockAt,
      `the moment both sessions wait (step ${sawCycleAt}) must come before the 40P01 (step ${deadlockAt})`,
    );
    // Real PostgreSQL (lessons/classic-deadlock.expected.txt): b2 gets "ERROR:  deadlock detected".
    assert(victim === 'B', `victim is session ${victim}; real PostgreSQL cancels B (see classic-deadlock.expected.txt)`);
    const survivor = 'A';
    const v = await ctx.paneView(victim);
    assert(v.output.includes('ERROR:  deadlock detected'), `victim pane lacks "ERROR:  deadlock detected": ${norm(v.output)}`);
    const detail = new RegExp(
      `DETAIL:\\s+Process ${ids.B.pid} waits for ShareLock on transaction ${ids.A.xid}; blocked by process ${ids.A.pid}\\.\\s+Process ${ids.A.pid} waits for ShareLock on transaction ${ids.B.xid}; blocked by process ${ids.B.pid}\\.`,
    );
    assert(
      detail.test(v.output),
      `victim DETAIL does not name both processes with the pids/xids shown in the panes (${JSON.stringify(ids)}): ${norm(v.output)}`,
    );
    assert(v.state === 'aborted', `victim pane state is ${v.state}, expected aborted`);
    const s = await ctx.paneView(survivor);
    assert(
      s.state === 'idle-in-transaction' && /UPDATE 1/.test(s.output),
      `survivor A should have finished its UPDATE (idle in transaction, "UPDATE 1"), got ${s.state}: ${norm(s.output)}`,
    );
    const victimNodes = await ctx.page
      .locator('[data-testid="wfg-node"][data-victim="true"]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-session')));
    assert(victimNodes.length === 1 && victimNodes[0] === victim, `wait-for graph victim nodes: [${victimNodes}], expected [${victim}]`);
    const cycleLeft = await ctx.page.locator('[data-testid="wfg-edge"][data-in-cycle="true"]').count();
    assert(cycleLeft === 0, `${cycleLeft} cycle edges still drawn after the victim was cancelled`);
    const log = (await ctx.byTestId('server-log').textContent()) ?? '';
    assert(/ERROR:\s+deadlock detected/.test(log), `server log lacks the deadlock: ${log.slice(0, 300)}`);
    assert(new RegExp(`Process ${ids.B.pid}: UPDATE accounts`).test(log), `server log lacks the victim's query line: ${log.slice(0, 500)}`);
    await ctx.shot();

    // The broken-cycle edges are drawn only when the clock stands exactly at the detection
    // (model/graph.ts brokenCycleEdges). The lesson's 2 s pause overshoots it, so go back to the
    // cycle and advance to the next timer (B's deadlock_timeout) with the clock button.
    await ctx.prev();
    const back = await ctx.edges();
    assert(back.includes('A->B (cycle)') && back.includes('B->A (cycle)'), `after undo to the cycle, edges are [${back}]`);
    const timer = ctx.byTestId('advance-timer');
    assert(await timer.isEnabled(), '"advance to next timer" is disabled while both sessions wait');
    await timer.click();
    await waitFor(
      async () => (await ctx.byTestId('wfg-broken-edge').count()) === 2 && !(await ctx.busy()),
      'after advancing to the deadlock timer, two broken-cycle edges (wfg-broken-edge) should be drawn',
    );
    const broken = await ctx
      .byTestId('wfg-broken-edge')
      .evaluateAll((els) => els.map((e) => `${e.getAttribute('data-from')}->${e.getAttribute('data-to')}`).sort());
    assert(broken.join() === 'A->B,B->A', `broken edges: [${broken}]`);
    assert(
      (await ctx.clock()).includes('3 s'),
      `clock after the deadlock_timeout fired: "${await ctx.clock()}" (B began waiting at 2 s, deadlock_timeout = 1s)`,
    );
    assert(
      (await ctx.paneView('B')).output.includes('ERROR:  deadlock detected'),
      'advancing the timer did not cancel B with deadlock detected',
    );
    await ctx.shot('broken-cycle');
  },
};

const classicDeadlockRu: Flow = {
  name: 'classic-deadlock-ru',
  title: 'RU: lang switch, Russian UI labels through the whole lesson, Russian narration',
  async run(ctx) {
    const lesson = lessonYaml('classic-deadlock');
    const items = scriptItems('classic-deadlock');
    await ctx.openLesson('classic-deadlock');
    await ctx.byTestId('lang-switch').selectOption('ru');
    await waitFor(async () => (await ctx.page.evaluate(() => document.documentElement.lang)) === 'ru', '<html lang> did not become "ru"');
    const expectText = async (sel: string, text: string, what: string) => {
      const got = norm((await ctx.page.locator(sel).first().textContent()) ?? '');
      assert(got.includes(text), `${what}: expected "${text}", got "${got}"`);
    };
    await expectText('[data-testid="step-next"]', 'Следующий шаг', 'next button');
    await expectText('[data-testid="step-prev"]', 'Предыдущий шаг', 'prev button');
    await expectText('[data-testid="step-reset"]', 'Сначала', 'reset button');
    await expectText('.player h2', lesson.title.ru, 'lesson title');
    await expectText('.wfg h3', 'Граф ожиданий', 'wait-for graph title');
    await expectText('[data-testid="step-position"]', 'Шаг 0 из', 'step counter');
    await expectText('header nav', 'Уроки', 'navigation');
    // Before the first step the narration panel shows the lesson summary, in Russian.
    await expectText(
      '[data-testid="narration"] [data-testid="narration-text"]',
      norm(lesson.summary.ru),
      'lesson summary in the narration panel',
    );
    ctx.predictPolicy = 'skip';

    const missingNarration: string[] = [];
    const [, total] = await ctx.position();
    assert(total === items.length, `script length ${total} ≠ ${items.length} non-predict items in the YAML`);
    for (let i = 0; i < total; i++) {
      const cursor = await ctx.next();
      const states = await ctx.states();
      if (states.A === 'waiting')
        await expectText(
          '[data-testid="session-pane"][data-session="A"] [data-testid="session-state"]',
          'ждёт блокировку',
          'state of a waiting session',
        );
      if (states.A === 'waiting')
        await expectText('[data-testid="session-pane"][data-session="A"] [data-testid="wait-text"]', 'держит сессия B', 'wait text');
      if (states.B === 'aborted')
        await expectText(
          '[data-testid="session-pane"][data-session="B"] [data-testid="session-state"]',
          'транзакция прервана',
          'state of the victim',
        );
      // The narration panel shows the Russian narration of the step just played.
      const done = items[cursor - 1]?.narration;
      const panel = ctx.byTestId('narration');
      const shownCursor = await panel.getAttribute('data-cursor');
      const shown = norm(
        (await panel
          .getByTestId('narration-text')
          .textContent()
          .catch(() => '')) ?? '',
      );
      if (shownCursor !== String(cursor)) missingNarration.push(`step ${cursor}: panel is at data-cursor=${shownCursor}`);
      else if (done && shown !== norm(done.ru))
        missingNarration.push(`step ${cursor}: expected «${norm(done.ru).slice(0, 60)}…», shown «${shown.slice(0, 60)}…»`);
      else if (done && shown === norm(done.en)) missingNarration.push(`step ${cursor}: the narration is in English`);
      const heading = norm((await panel.getByTestId('narration-step').textContent()) ?? '');
      if (!heading.startsWith(`Шаг ${cursor}:`)) missingNarration.push(`step ${cursor}: narration heading «${heading}»`);
      if (cursor === 6) await ctx.shot('deadlock');
    }
    await expectText('.player .next', 'Конец урока.', 'end of lesson');
    await expectText('[data-testid="narration"] [data-testid="narration-finished"]', 'Конец урока.', 'end of lesson in the narration');
    assert(
      ctx.predicts.length === predicts('classic-deadlock').length && ctx.predicts.every((p) => p.choice === null),
      `expected to skip every predict question ("Пропустить вопрос"), got ${JSON.stringify(ctx.predicts)}`,
    );
    await expectText('[data-testid="step-position"]', `Шаг ${total} из ${total}`, 'step counter at the end');
    const body = await ctx.page.locator('body').innerText();
    for (const en of ['Next step', 'Previous step', 'Wait-for graph', 'Server log'])
      assert(!body.includes(en), `English UI text "${en}" still shown in Russian mode`);
    await ctx.shot();
    // Progress: the lesson list (in Russian) marks it done.
    await ctx.page.locator('header nav a[href="#/"]').click();
    const row = ctx.page.locator('[data-testid="lesson-row"][data-lesson="classic-deadlock"]');
    await waitFor(
      async () => (await row.getAttribute('data-done')) === 'true',
      'lesson list does not mark classic-deadlock done after playing to the end',
    );
    await expectText('[data-testid="lesson-row"][data-lesson="classic-deadlock"]', 'Пройден', 'done status in the list');
    await expectText('[data-testid="lesson-row"][data-lesson="classic-deadlock"] a', lesson.title.ru, 'lesson title in the list');
    assert(
      missingNarration.length === 0,
      `the Russian narration is not shown in [data-testid=narration] (${missingNarration.length}/${total} steps), e.g. ${missingNarration.slice(0, 2).join('; ')}`,
    );
  },
};

/** The data view's rows of one table as shown now: { ctid, values by column, lock badges }. */
async function dataRows(ctx: FlowContext, table: string) {
  const t = ctx.page.locator(`[data-testid="data-view"] [data-testid="data-table"][data-table="${table}"]`);
  await waitFor(async () => (await t.count()) === 1, `data view: no table "${table}"`);
  const columns = await t.locator('thead th').allTextContents();
  return t.locator('tbody tr').evaluateAll(
    (trs, cols) =>
      trs.map((tr) => {
        const cells = [...tr.querySelectorAll('td')].map((td) => (td.textContent ?? '').trim());
        // columns: ctid, the table's columns, row locks
        const values = Object.fromEntries(cols.slice(1, -1).map((c, i) => [c.trim(), cells[i + 1]]));
        return { values, badges: [...tr.querySelectorAll('[data-testid="row-lock-badge"]')].map((b) => b.getAttribute('data-session')) };
      }),
    columns,
  );
}

const dataViewMvcc: Flow = {
  name: 'data-view-mvcc',
  title: "classic-deadlock: 'seen by' shows each session's own uncommitted UPDATE; committed data and the other session do not",
  async run(ctx) {
    // Expected balances from the lesson YAML: the setup's INSERT and the first UPDATE of A and of B.
    const lesson = lessonYaml('classic-deadlock') as LessonYaml & { setup: string };
    const initial = new Map<string, number>();
    const ins = /INSERT INTO accounts VALUES\s*(.*);/i.exec(lesson.setup);
    assert(ins, `classic-deadlock.yaml setup has no INSERT INTO accounts: ${lesson.setup}`);
    for (const m of ins[1].matchAll(/\((\d+),\s*(\d+)\)/g)) initial.set(m[1], Number(m[2]));
    const items = scriptItems('classic-deadlock');
    const debit = (i: number) => {
      const m = /UPDATE accounts SET balance = balance - (\d+) WHERE id = (\d+)/.exec(items[i].sql ?? '');
      assert(m, `classic-deadlock step ${i + 1} is not a debit UPDATE: ${items[i].sql}`);
      return { session: items[i].session!, id: m[2], amount: Number(m[1]) };
    };
    const a = debit(0);
    const b = debit(1);
    assert(a.session === 'A' && b.session === 'B' && a.id !== b.id, `first two steps: ${JSON.stringify([a, b])}`);
    const balanceOf = async (seenBy: string, id: string): Promise<string> => {
      await ctx.byTestId('data-seen-by').selectOption(seenBy);
      const rows = await dataRows(ctx, 'accounts');
      const row = rows.filter((r) => r.values.id === id);
      assert(row.length === 1, `data view seen by "${seenBy || 'committed'}": ${row.length} rows with id ${id} (${JSON.stringify(rows)})`);
      return row[0].values.balance;
    };
    const expectBalances = async (step: number, want: Record<string, Record<string, number>>) => {
      for (const [seenBy, balances] of Object.entries(want))
        for (const [id, bal] of Object.entries(balances)) {
          const got = await balanceOf(seenBy, id);
          assert(
            Number(got) === bal,
            `step ${step}: account ${id} seen by ${seenBy || 'committed data'} shows balance ${got}, expected ${bal}`,
          );
        }
    };

    await ctx.openLesson('classic-deadlock');
    const options = await ctx
      .byTestId('data-seen-by')
      .locator('option')
      .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    assert(
      options.join() === ',A,B',
      `"seen by" options: [${options}] (committed, then the sessions A and B; the pause session stays hidden)`,
    );
    await expectBalances(0, { '': Object.fromEntries(initial) });

    // Step 1: A debits its account inside its open transaction.
    await ctx.next();
    const before = initial.get(a.id)!;
    await expectBalances(1, {
      A: { [a.id]: before - a.amount, [b.id]: initial.get(b.id)! },
      '': { [a.id]: before, [b.id]: initial.get(b.id)! },
      B: { [a.id]: before, [b.id]: initial.get(b.id)! },
    });
    // The committed view marks A's row lock on the row it updated.
    await ctx.byTestId('data-seen-by').selectOption('');
    const locked = (await dataRows(ctx, 'accounts')).find((r) => r.values.id === a.id);
    assert(locked?.badges.join() === 'A', `committed view: row ${a.id} lock badges [${locked?.badges}], expected [A]`);
    await ctx.byTestId('data-seen-by').selectOption('A');
    await ctx.shot('seen-by-A');

    // Step 2: B debits the other account; each session sees only its own change.
    await ctx.next();
    await expectBalances(2, {
      A: { [a.id]: before - a.amount, [b.id]: initial.get(b.id)! },
      B: { [a.id]: before, [b.id]: initial.get(b.id)! - b.amount },
      '': Object.fromEntries(initial),
    });
    await ctx.byTestId('data-seen-by').selectOption('B');
    await ctx.shot();
  },
};

const nowait: Flow = {
  name: 'nowait',
  title: 'FOR UPDATE NOWAIT fails at once with 55P03, no wait, then 25P02',
  async run(ctx) {
    await ctx.openLesson('nowait');
    const items = scriptItems('nowait');
    const target = items.findIndex((s) => /FOR UPDATE NOWAIT/.test(s.sql ?? '')) + 1;
    assert(target > 0, 'nowait.yaml has no FOR UPDATE NOWAIT step');
    while ((await ctx.position())[0] < target) await ctx.next();
    const session = items[target - 1].session!;
    const b = await ctx.paneView(session);
    assert(
      b.output.includes('ERROR:  could not obtain lock on row in relation "accounts"'),
      `session ${session} after NOWAIT: ${norm(b.output)}`,
    );
    assert(/SQLSTATE:\s+55P03/.test(b.output), `SQLSTATE 55P03 not shown: ${norm(b.output)}`);
    const sqlstate = await ctx.pane(session).locator('[data-testid="pg-message"]').last().getAttribute('data-sqlstate');
    assert(sqlstate === '55P03', `pg-message data-sqlstate=${sqlstate}`);
    assert(b.state === 'aborted', `session ${session} state ${b.state}, expected aborted`);
    const states = await ctx.states();
    assert(!Object.values(states).includes('waiting'), `NOWAIT must not wait: states ${JSON.stringify(states)}`);
    assert((await ctx.edges()).length === 0, 'wait-for graph has edges after NOWAIT');
    assert(/\b0 ms\b/.test(await ctx.clock()), `virtual clock moved: "${await ctx.clock()}" (NOWAIT starts no timer)`);
    await ctx.shot();
    await ctx.next();
    const after = await ctx.paneView(session);
    assert(
      /current transaction is aborted, commands ignored until end of transaction block/.test(after.output) && /25P02/.test(after.output),
      `next statement in the aborted transaction: ${norm(after.output)}`,
    );
  },
};

/** SIReadLock rows of the lock table as shown: session, committed mark, locktype, relation, mode, granted. */
async function sireadRows(ctx: FlowContext) {
  return ctx.page.locator('[data-testid="lock-table"] [data-testid="siread-lock-row"]').evaluateAll((trs) =>
    trs.map((tr) => {
      // No named helper in here: the bundler's __name() does not exist in the page.
      const [locktype, relation, modeText, granted] = ['locktype', 'relation', 'mode', 'granted'].map((c) =>
        (tr.querySelector(`td.${c}`)?.textContent ?? '').replace(/\s+/g, ' ').trim(),
      );
      return {
        session: tr.getAttribute('data-session') ?? '',
        committed: tr.getAttribute('data-committed') === 'true',
        locktype,
        relation,
        mode: tr.getAttribute('data-mode') ?? '',
        modeText,
        granted: /\bt\b/.test(granted),
      };
    }),
  );
}

/** The rw-antidependency edges drawn in the wait-for graph, "from->to" (+ "*" on a committed end), sorted. */
async function rwEdgesShown(ctx: FlowContext): Promise<string[]> {
  return ctx
    .byTestId('wfg-rw-edge')
    .evaluateAll((els) =>
      els
        .map(
          (e) =>
            `${e.getAttribute('data-from')}${e.getAttribute('data-from-committed') === 'true' ? '*' : ''}->${e.getAttribute('data-to')}${e.getAttribute('data-to-committed') === 'true' ? '*' : ''}`,
        )
        .sort(),
    );
}

const serializableWriteSkew: Flow = {
  name: 'serializable-write-skew',
  title: 'SERIALIZABLE: SIReadLock rows, rw edges A⇄B, B doomed once A commits (never a wait); B’s COMMIT fails with 40001',
  async run(ctx) {
    const id = 'serializable-write-skew';
    const items = scriptItems(id);
    const checkpoints = predicts(id);
    ctx.predictPolicy = rightAnswers(id);
    // Cursor positions from the YAML: A's BEGIN … SERIALIZABLE, then A's COMMIT, then B's COMMIT.
    const serStart = items.findIndex((s) => /ISOLATION LEVEL SERIALIZABLE/.test(s.sql ?? '')) + 1;
    const aCommit = items.findIndex((s, i) => i >= serStart && s.session === 'A' && /^COMMIT/.test(s.sql ?? '')) + 1;
    const bCommit = items.findIndex((s, i) => i >= aCommit && s.session === 'B' && /^COMMIT/.test(s.sql ?? '')) + 1;
    assert(serStart > 0 && aCommit > serStart && bCommit === aCommit + 1, `unexpected lesson shape: ${serStart}, ${aCommit}, ${bCommit}`);

    await ctx.openLesson(id);
    for (let cursor = 0; cursor < aCommit;) {
      cursor = await ctx.next();
      const states = await ctx.states();
      assert(!Object.values(states).includes('waiting'), `step ${cursor}: someone waits in a write skew: ${JSON.stringify(states)}`);
      assert((await ctx.edges()).length === 0, `step ${cursor}: lock-wait edges [${await ctx.edges()}] (nobody waits)`);
      if (cursor < serStart) {
        // REPEATABLE READ takes no SIRead locks and records no dependencies.
        assert((await sireadRows(ctx)).length === 0, `step ${cursor} (REPEATABLE READ): SIReadLock rows shown`);
        assert((await rwEdgesShown(ctx)).length === 0, `step ${cursor} (REPEATABLE READ): rw edges drawn`);
      }
      if (cursor === aCommit - 1) {
        // Both updated what the other read: two rw-antidependencies, nobody doomed yet.
        const rw = await rwEdgesShown(ctx);
        assert(rw.join() === 'A->B,B->A', `step ${cursor}, before A's COMMIT: rw edges [${rw}], expected A→B and B→A`);
        assert(
          (await ctx.byTestId('wfg-doomed-badge').count()) === 0,
          `step ${cursor}: a session is marked doomed before anybody committed`,
        );
      }
    }

    // After A's second COMMIT: B is the doomed pivot.
    const rw = await rwEdgesShown(ctx);
    assert(rw.join() === 'A*->B,B->A*', `after A's COMMIT: rw edges [${rw}], expected A→B and B→A with A's end committed`);
    const labels = await ctx.byTestId('wfg-rw-edge').locator('text').allTextContents();
    assert(labels.length === 2 && labels.every((l) => l.trim() === 'rw'), `rw edge labels: ${JSON.stringify(labels)}`);
    assert((await ctx.edges()).length === 0, `lock-wait edges drawn next to the rw edges: [${await ctx.edges()}]`);
    assert(await ctx.byTestId('wfg-legend-rw').isVisible(), 'no legend entry for the rw edges');
    const doomedNodes = await ctx.page
      .locator('[data-testid="wfg-node"][data-doomed="true"]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-session')));
    assert(doomedNodes.join() === 'B', `doomed graph nodes: [${doomedNodes}], expected [B]`);
    const badge = norm((await ctx.byTestId('wfg-doomed-badge').textContent()) ?? '');
    assert(/doomed/.test(badge) && /40001/.test(badge), `doomed badge: "${badge}"`);
    assert((await ctx.pane('B').getAttribute('data-doomed')) === 'true', 'session pane B is not marked doomed');
    assert(
      /40001/.test((await ctx.pane('B').getByTestId('session-doomed').textContent()) ?? ''),
      'pane B: the doomed note does not name 40001',
    );
    assert((await ctx.pane('A').getByTestId('session-doomed').count()) === 0, 'pane A is marked doomed');
    const b = await ctx.paneView('B');
    assert(
      b.state === 'idle-in-transaction',
      `B is ${b.state}: a doomed transaction is still idle in transaction until its next statement`,
    );
    const rows = await sireadRows(ctx);
    const summary = JSON.stringify(rows);
    assert(
      rows.length > 0 && rows.every((r) => r.mode === 'SIReadLock' && r.modeText.startsWith('SIReadLock') && r.granted),
      `SIReadLock rows: ${summary}`,
    );
    assert(
      rows.every((r) => ['relation', 'page', 'tuple'].includes(r.locktype)),
      `SIRead locktypes: ${summary}`,
    );
    for (const s of ['A', 'B'])
      assert(
        rows.some((r) => r.session === s && r.locktype === 'relation' && r.relation === 'doctors'),
        `session ${s}: no SIReadLock on relation doctors (its count(*) scanned the table): ${summary}`,
      );
    assert(
      rows.filter((r) => r.session === 'A').every((r) => r.committed),
      `A's SIRead locks are not marked committed: ${summary}`,
    );
    assert(
      rows.filter((r) => r.session === 'B').every((r) => !r.committed),
      `B's SIRead locks are marked committed: ${summary}`,
    );
    const committedTags = await ctx.page
      .locator('[data-testid="siread-lock-row"][data-session="A"] [data-testid="siread-committed"]')
      .allTextContents();
    assert(
      committedTags.length > 0 && committedTags.every((t) => t.trim() === 'committed'),
      `A's committed tags: ${JSON.stringify(committedTags)}`,
    );
    assert(await ctx.byTestId('siread-note').isVisible(), 'no explanation under the SIReadLock rows');
    await ctx.shot();

    // B's COMMIT: the predicted 40001.
    await ctx.next();
    assert(
      ctx.predicts.length === checkpoints.length && ctx.predicts.every((p, i) => p.choice === checkpoints[i].answer),
      `expected to answer all ${checkpoints.length} checkpoints right, answered ${JSON.stringify(ctx.predicts)}`,
    );
    const after = await ctx.paneView('B');
    assert(
      after.output.includes('ERROR:  could not serialize access due to read/write dependencies among transactions'),
      `B's COMMIT: ${norm(after.output)}`,
    );
    assert(/Canceled on identification as a pivot, during commit attempt/.test(after.output), `B's DETAIL: ${norm(after.output)}`);
    const sqlstate = await ctx.pane('B').locator('[data-testid="pg-message"]').last().getAttribute('data-sqlstate');
    assert(sqlstate === '40001', `B's COMMIT failed with SQLSTATE ${sqlstate}, expected 40001`);
    assert((await ctx.pane('B').getByTestId('session-doomed').count()) === 0, 'B is still marked doomed after its COMMIT failed');
    assert((await ctx.byTestId('wfg-doomed-badge').count()) === 0, 'the graph still marks a doomed session after the 40001');
    assert((await rwEdgesShown(ctx)).length === 0, `rw edges left after the 40001: [${await rwEdgesShown(ctx)}]`);
    assert((await sireadRows(ctx)).length === 0, 'SIReadLock rows left after both transactions ended');
    await ctx.shot('40001');
  },
};

/**
 * Plays skip-locked-queue step by step and, after every step, compares the stepping worker's
 * result table with what real PostgreSQL printed (skip-locked-queue.expected.txt); nobody may
 * ever wait. `afterStep` adds per-language checks.
 */
async function playSkipLockedAgainstPostgres(
  ctx: FlowContext,
  afterStep: (cursor: number) => Promise<void> = async () => undefined,
): Promise<void> {
  const expected = expectedSteps('skip-locked-queue');
  const items = scriptItems('skip-locked-queue');
  assert(expected.length === items.length, `expected.txt has ${expected.length} steps, the lesson ${items.length}`);
  const [, total] = await ctx.position();
  assert(total === items.length, `script length ${total} ≠ ${items.length} non-predict items in the YAML`);
  const mismatches: string[] = [];
  let listing = '';
  for (let i = 0; i < items.length; i++) {
    const cursor = await ctx.next();
    const exp = expected[i];
    const session = items[i].session!;
    assert(
      exp.name.toUpperCase().startsWith(`${session}_`),
      `step ${cursor}: expected.txt step ${exp.name} does not belong to session ${session}`,
    );
    const pane = await ctx.paneView(session);
    const shown = pane.tables.flat().map((r) => r.map((c) => c.trim()));
    if (JSON.stringify(shown) !== JSON.stringify(exp.rows))
      mismatches.push(`step ${cursor} (${exp.name}): UI ${JSON.stringify(shown)} ≠ PostgreSQL ${JSON.stringify(exp.rows)}`);
    // W3's SKIP LOCKED listing: the locked jobs 2 and 4 are missing, only 3 and 5 are listed.
    if (exp.name === 'w3_4') listing = JSON.stringify(shown);
    const states = await ctx.states();
    assert(!Object.values(states).includes('waiting'), `step ${cursor}: someone waits under SKIP LOCKED: ${JSON.stringify(states)}`);
    await afterStep(cursor);
  }
  assert(mismatches.length === 0, `result tables differ from skip-locked-queue.expected.txt:\n${mismatches.join('\n')}`);
  assert(listing === JSON.stringify([['3'], ['5']]), `W3's SKIP LOCKED listing (w3_4) shows ${listing}`);
}

const skipLocked: Flow = {
  name: 'skip-locked-queue',
  title: 'every worker result equals what real PostgreSQL returned; nobody waits',
  async run(ctx) {
    await ctx.openLesson('skip-locked-queue');
    await playSkipLockedAgainstPostgres(ctx);
    await ctx.shot();
  },
};

const skipLockedRu: Flow = {
  name: 'skip-locked-queue-ru',
  title: 'RU: Russian narration and predicts through the whole lesson; results equal real PostgreSQL',
  async run(ctx) {
    const id = 'skip-locked-queue';
    const lesson = lessonYaml(id);
    const items = scriptItems(id);
    const checkpoints = predicts(id);
    await ctx.openLesson(id);
    await ctx.byTestId('lang-switch').selectOption('ru');
    await waitFor(async () => (await ctx.page.evaluate(() => document.documentElement.lang)) === 'ru', '<html lang> did not become "ru"');
    const textOf = async (sel: string) => norm((await ctx.page.locator(sel).first().textContent()) ?? '');
    const expectText = async (sel: string, text: string, what: string) => {
      const got = await textOf(sel);
      assert(got.includes(text), `${what}: expected "${text}", got "${got}"`);
    };
    await expectText('.player h2', lesson.title.ru, 'lesson title');
    await expectText('[data-testid="step-next"]', 'Следующий шаг', 'next button');
    await expectText('[data-testid="step-position"]', 'Шаг 0 из', 'step counter');
    await expectText(
      '[data-testid="narration"] [data-testid="narration-text"]',
      norm(lesson.summary.ru),
      'lesson summary in the narration panel',
    );
    // Answer every predict checkpoint right, recognising it by its Russian question.
    ctx.predictPolicy = rightAnswers(id, 'ru');
    const problems: string[] = [];
    let answered = 0;
    await playSkipLockedAgainstPostgres(ctx, async (cursor) => {
      const panel = ctx.byTestId('narration');
      const shownCursor = await panel.getAttribute('data-cursor');
      const done = items[cursor - 1].narration;
      assert(done, `skip-locked-queue.yaml step ${cursor} has no narration`);
      const shown = norm((await panel.getByTestId('narration-text').textContent()) ?? '');
      if (shownCursor !== String(cursor)) problems.push(`step ${cursor}: narration panel at data-cursor=${shownCursor}`);
      else if (shown !== norm(done.ru))
        problems.push(`step ${cursor}: expected «${norm(done.ru).slice(0, 60)}…», shown «${shown.slice(0, 60)}…»`);
      const heading = norm((await panel.getByTestId('narration-step').textContent()) ?? '');
      if (!heading.startsWith(`Шаг ${cursor}:`)) problems.push(`step ${cursor}: narration heading «${heading}»`);
      // A checkpoint answered on the way to this step: the verdict and the Russian explanation.
      if (ctx.predicts.length > answered) {
        answered = ctx.predicts.length;
        const p = checkpoints[answered - 1];
        const verdict = await ctx.byTestId('predict-result').getAttribute('data-verdict');
        assert(verdict === 'right', `step ${cursor}: predict-result verdict "${verdict}" after the right answer`);
        const expl = norm((await ctx.byTestId('predict-explanation').textContent()) ?? '');
        assert(
          expl === norm(p.explanation.ru),
          `step ${cursor}: predict explanation «${expl.slice(0, 60)}…» is not the YAML's Russian text`,
        );
      }
      if (cursor === 8) await ctx.shot('listing'); // W3's SKIP LOCKED listing: only 3 and 5
    });
    assert(
      answered === checkpoints.length && ctx.predicts.every((p, i) => p.choice === checkpoints[i].answer),
      `expected to answer all ${checkpoints.length} checkpoints right, answered ${JSON.stringify(ctx.predicts)}`,
    );
    assert(problems.length === 0, `the Russian narration is not shown in [data-testid=narration]: ${problems.slice(0, 3).join('; ')}`);
    await expectText('[data-testid="narration"] [data-testid="narration-finished"]', 'Конец урока.', 'end of lesson in the narration');
    await expectText('[data-testid="step-position"]', `Шаг ${items.length} из ${items.length}`, 'step counter at the end');
    const body = await ctx.page.locator('body').innerText();
    for (const en of ['Next step', 'Previous step', 'Wait-for graph', 'Server log'])
      assert(!body.includes(en), `English UI text "${en}" still shown in Russian mode`);
    await ctx.shot();
  },
};

const undo: Flow = {
  name: 'undo-and-reload',
  title: 'keys → / ←, prev restores step k−1 exactly, URL follows, reload restores the step',
  async run(ctx) {
    const id = 'classic-deadlock';
    await ctx.openLesson(id);
    const seen = [await ctx.view()];
    const k = 6; // one past the deadlock: undo must bring the cycle back
    for (let i = 1; i <= k; i++) {
      await ctx.key('ArrowRight', i);
      seen.push(await ctx.view());
      await ctx.expectUrl(`#/lessons/${id}/step/${i}`, `after step ${i}`);
    }
    assert(
      seen[k].panes.some((p) => p.state === 'aborted'),
      `step ${k} should show the victim aborted`,
    );
    await ctx.prev();
    const back = await ctx.view();
    const d1 = diffViews(seen[k - 1], back);
    assert(d1.length === 0, `after prev, the state differs from step ${k - 1}:\n${d1.join('\n')}`);
    await ctx.expectUrl(`#/lessons/${id}/step/${k - 1}`, 'after prev');
    await ctx.shot('after-prev');
    await ctx.key('ArrowLeft', k - 2);
    const d2 = diffViews(seen[k - 2], await ctx.view());
    assert(d2.length === 0, `after ←, the state differs from step ${k - 2}:\n${d2.join('\n')}`);
    await ctx.key('ArrowRight', k - 1);
    // The address bar follows the step a frame after it is drawn (App.svelte's syncUrl); a reload
    // before that frame would rebuild the step before.
    await ctx.expectUrl(`#/lessons/${id}/step/${k - 1}`, 'before reload');
    // Reload the URL: the same step is rebuilt from scratch by a new engine.
    await ctx.page.reload();
    await ctx.waitForCursor(k - 1, 'reload', 40_000);
    await ctx.expectUrl(`#/lessons/${id}/step/${k - 1}`, 'after reload');
    const d3 = diffViews(seen[k - 1], await ctx.view());
    assert(d3.length === 0, `after reload, the state differs from step ${k - 1}:\n${d3.join('\n')}`);
    await ctx.shot();
    // R resets to the start.
    await ctx.key('r', 0);
    const d4 = diffViews(seen[0], await ctx.view());
    assert(d4.length === 0, `after R (reset), the state differs from step 0:\n${d4.join('\n')}`);
  },
};

const watchdog: Flow = {
  name: 'watchdog',
  title: 'pg_sleep(30) is virtual; a runaway CTE is stopped, UI stays responsive, scenario rebuilt',
  async run(ctx) {
    await ctx.openLesson('nowait', 1);
    const before = await ctx.states();
    assert(before.A === 'idle-in-transaction', `nowait step 1: A should hold row 1 in an open transaction, got ${JSON.stringify(before)}`);

    // 1. pg_sleep(30) returns at once on the virtual clock.
    let t0 = Date.now();
    await ctx.submitAdHoc('B', 'SELECT pg_sleep(30)');
    await waitFor(
      async () => (await ctx.paneView('B')).output.includes('pg_sleep') && !(await ctx.busy()),
      'pg_sleep(30) result never appeared in session B',
    );
    const sleepMs = Date.now() - t0;
    assert(sleepMs < 2500, `pg_sleep(30) took ${sleepMs} ms of real time (the clock is virtual)`);
    assert(/30 s/.test(await ctx.clock()), `virtual clock after pg_sleep(30): "${await ctx.clock()}"`);
    assert(
      (await ctx.byTestId('engine-error').count()) === 0,
      `a watchdog/engine message appeared after pg_sleep: ${await ctx.byTestId('engine-error').allInnerTexts()}`,
    );

    // 2. The runaway recursive CTE.
    await ctx.page.evaluate('window.__frames = 0; (function tick() { window.__frames++; requestAnimationFrame(tick); })();');
    const frames = () => ctx.page.evaluate('window.__frames') as Promise<number>;
    const theme0 = await ctx.page.evaluate(() => document.documentElement.dataset.theme);
    t0 = Date.now();
    await ctx.submitAdHoc('B', 'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT count(*) FROM r');
    await waitFor(() => ctx.busy(), 'the player never showed "busy" for the runaway statement', 2000, 20);
    const f0 = await frames();
    await ctx.page.waitForTimeout(1000);
    const f1 = await frames();
    assert(f1 - f0 >= 20, `main thread starved while the statement runs: only ${f1 - f0} animation frames in 1 s`);
    // A UI button responds during the run.
    assert(await ctx.busy(), 'the statement finished before the responsiveness check (expected a runaway)');
    const tClick = Date.now();
    await ctx.byTestId('theme-toggle').click({ timeout: 1000 });
    await waitFor(
      async () => (await ctx.page.evaluate(() => document.documentElement.dataset.theme)) !== theme0,
      'theme toggle did not respond during the runaway statement',
      1000,
      20,
    );
    const clickMs = Date.now() - tClick;
    assert(await ctx.busy(), 'the statement was no longer running when the button was checked');
    await ctx.shot('running');
    const msg = await waitFor(
      async () => {
        const el = ctx.byTestId('engine-error');
        return (await el.count()) ? ((await el.textContent()) ?? '') : '';
      },
      'no watchdog message after the runaway statement',
      // 3 s limit + the 10 s countdown nobody answers here + the rebuild.
      40_000,
    );
    const stopMs = Date.now() - t0;
    assert(/did not finish within 3 s and was stopped/.test(msg) && /scenario was rebuilt/.test(msg), `watchdog message: "${norm(msg)}"`);
    await waitFor(async () => !(await ctx.busy()), 'player still busy after the rebuild');
    const f2 = await frames();
    assert(f2 - f1 > 60, `animation frames stalled during the rebuild (${f2 - f1})`);
    // Rebuilt from history: A still holds its row, the clock keeps the 30 s sleep.
    const after = await ctx.states();
    assert(after.A === 'idle-in-transaction' && after.B === 'idle', `states after the rebuild: ${JSON.stringify(after)}`);
    assert(/30 s/.test(await ctx.clock()), `clock after the rebuild: "${await ctx.clock()}" (history includes pg_sleep(30))`);
    await ctx.shot();

    // 3. The session is usable afterwards.
    await ctx.submitAdHoc('B', 'SELECT 41 + 1 AS answer');
    await waitFor(
      async () => JSON.stringify((await ctx.paneView('B')).tables) === '[[["42"]]]' && !(await ctx.busy()),
      'session B did not answer SELECT 41 + 1 after the rebuild',
    );
    assert((await ctx.byTestId('engine-error').count()) === 0, 'the watchdog message stays after the next successful statement');
    // And the scenario still behaves: B cannot take A's row with NOWAIT.
    await ctx.submitAdHoc('B', 'SELECT id FROM accounts WHERE id = 1 FOR UPDATE NOWAIT');
    await waitFor(
      async () => /55P03/.test((await ctx.paneView('B')).output),
      'after the rebuild, A no longer holds row 1 (NOWAIT did not fail)',
    );
    console.log(
      `      watchdog: pg_sleep ${sleepMs} ms; runaway stopped+rebuilt after ${stopMs} ms; button responded in ${clickMs} ms; ${f1 - f0} frames/s while running`,
    );
  },
};

const hostile: Flow = {
  name: 'hostile-text',
  title: 'HTML in results and errors is shown as text, no dialog, no injected elements',
  async run(ctx) {
    await ctx.openLesson('nowait');
    const payload = '<script>alert(1)</script>';
    await ctx.submitAdHoc('A', `SELECT '${payload}' AS x`);
    await waitFor(async () => (await ctx.paneView('A')).tables.length > 0 && !(await ctx.busy()), 'no result table for the hostile SELECT');
    const a = await ctx.paneView('A');
    assert(JSON.stringify(a.tables) === JSON.stringify([[[payload]]]), `result cells: ${JSON.stringify(a.tables)}`);
    const th = await ctx.pane('A').locator('table.result th').allTextContents();
    assert(th.join() === 'x', `result header: ${th}`);
    assert((await ctx.pane('A').locator('script').count()) === 0, 'a <script> element was injected into the session pane');
    await ctx.shot('select');
    // The same in an error message (psql-style ERROR block).
    const img = '<img src=x onerror=alert(2)>';
    await ctx.submitAdHoc('A', `SELECT '${img}'::int`);
    await waitFor(async () => /22P02/.test((await ctx.paneView('A')).output) && !(await ctx.busy()), 'no 22P02 error for the hostile cast');
    const err = (await ctx.paneView('A')).output;
    assert(err.includes(`invalid input syntax for type integer: "${img}"`), `error text: ${norm(err)}`);
    assert((await ctx.page.locator('img').count()) === 0, 'an <img> element was injected into the page');
    await ctx.page.waitForTimeout(300);
    assert(ctx.dialogs.length === 0, `a dialog fired: ${ctx.dialogs.join('; ')}`);
    await ctx.shot();
  },
};

const presenter: Flow = {
  name: 'presenter',
  title: 'presenter mode at 1280×720 (toggle and P key), fits the width',
  viewport: { width: 1280, height: 720 },
  async run(ctx) {
    await ctx.openLesson('classic-deadlock', 5);
    const toggle = ctx.byTestId('presenter-toggle');
    assert((await toggle.count()) === 1, 'no presenter-toggle button');
    await toggle.click();
    await waitFor(
      () => ctx.page.evaluate(() => document.documentElement.classList.contains('presenter')),
      '<html> did not get the presenter class',
    );
    assert((await toggle.getAttribute('aria-pressed')) === 'true', 'presenter toggle is not aria-pressed');
    assert((await ctx.page.locator('form.adhoc').count()) === 0, 'ad-hoc inputs are still shown in presenter mode');
    const edges = await ctx.edges();
    assert(edges.includes('A->B (cycle)') && edges.includes('B->A (cycle)'), `cycle not drawn in presenter mode: [${edges}]`);
    const overflow = await ctx.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    await ctx.shot(undefined, true);
    await ctx.shot('full');
    await ctx.page.locator('body').press('p');
    await waitFor(
      async () => !(await ctx.page.evaluate(() => document.documentElement.classList.contains('presenter'))),
      'P did not leave presenter mode',
    );
    await ctx.page.locator('body').press('?');
    await waitFor(async () => await ctx.byTestId('shortcuts-dialog').isVisible(), '? did not open the shortcuts dialog');
    // Last, so the keyboard checks above still run when this product bug is present.
    assert(overflow <= 0, `presenter mode scrolls horizontally by ${overflow}px at 1280×720 (document.scrollWidth > viewport)`);
  },
};

// ---------------------------------------------------------------------------------------------
// Scenario lab (#/lab), retry lab (#/retry), interview mode (#/interview)

const TEMPLATES = join(LESSONS, 'lab-templates');

/** What the lab editor shows: title, sessions with their steps (name, SQL), order. */
async function labDocument(page: Page) {
  const title = await page.getByTestId('lab-title').inputValue();
  const order = await page.getByTestId('lab-order').inputValue();
  const sessions = await page.getByTestId('lab-session').evaluateAll((els) =>
    els.map((el) => ({
      name: (el.querySelector('[data-testid="lab-session-name"]') as HTMLInputElement).value,
      steps: [...el.querySelectorAll('[data-testid="lab-step"]')].map((st) => ({
        name: (st.querySelector('[data-testid="lab-step-name"]') as HTMLInputElement).value,
        sql: ((st.querySelector('.cm-content') as HTMLElement).innerText ?? '').replace(/\s+/g, ' ').trim(),
      })),
    })),
  );
  return { title, order, sessions };
}

const LAB_A = ['BEGIN; UPDATE t SET v = v + 1 WHERE id = 1;', 'UPDATE t SET v = v + 1 WHERE id = 2;', 'COMMIT;'];
const LAB_B = ['BEGIN; UPDATE t SET v = v + 1 WHERE id = 2;', 'UPDATE t SET v = v + 1 WHERE id = 1;', 'COMMIT;'];
const LAB_ORDER = 's1a s2a s1b s2b s1c s2c';

const labEditor: Flow = {
  name: 'lab-editor',
  title: 'lab: build a two-session scenario in the editor, play it to 40P01; its share link reopens it in a fresh context',
  async run(ctx) {
    await ctx.page.goto(ctx.url('#/lab'));
    await waitFor(() => ctx.byTestId('lab-editor').isVisible(), 'the lab editor never appeared at #/lab');
    await ctx.byTestId('lab-blank').click();
    await ctx.byTestId('lab-title').fill('Two transfers, built in the editor');
    // The blank scenario has sessions s1 and s2 with one step each; give each two more.
    assert((await ctx.byTestId('lab-session').count()) === 2, 'a blank lab scenario should have two sessions');
    for (let si = 0; si < 2; si++) for (let k = 0; k < 2; k++) await ctx.byTestId('lab-add-step').nth(si).click();
    const names = await ctx.byTestId('lab-step-name').evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value));
    assert(names.join(' ') === 's1a s1b s1c s2a s2b s2c', `step names after adding steps: ${names.join(' ')}`);
    const sqls = [...LAB_A, ...LAB_B];
    for (let i = 0; i < sqls.length; i++) await ctx.setSql('lab-step-sql', i, sqls[i]);
    await ctx.byTestId('lab-order').fill(LAB_ORDER);
    await ctx.labPlayable('after building the scenario');
    const built = await labDocument(ctx.page);

    // Play it in the lab's player, step by step, until both sessions wait in a cycle; then let
    // the virtual clock run to the first deadlock_timeout, as a user would, and see the 40P01.
    await ctx.byTestId('lab-play').click();
    await ctx.waitForCursor(0, 'opening the scenario in the lab player', 40_000);
    const [, total] = await ctx.position();
    assert(total === 6, `the lab player shows ${total} steps, expected the 6 of the order "${LAB_ORDER}"`);
    let cycleAt = -1;
    while (cycleAt < 0 && (await ctx.position())[0] < total) {
      const cursor = await ctx.next();
      const edges = await ctx.edges();
      if (edges.includes('s1->s2 (cycle)') && edges.includes('s2->s1 (cycle)')) cycleAt = cursor;
    }
    assert(cycleAt === 4, `the wait-for cycle s1→s2→s1 should appear after s2b (step 4), saw it at ${cycleAt}`);
    const states = await ctx.states();
    assert(states.s1 === 'waiting' && states.s2 === 'waiting', `both sessions should wait at the cycle: ${JSON.stringify(states)}`);
    await ctx.shot('cycle');
    await ctx.byTestId('advance-timer').click();
    const victim = await waitFor(
      async () => ((await ctx.busy()) ? null : ((await ctx.panes()).find((p) => /SQLSTATE:\s+40P01/.test(p.output))?.session ?? null)),
      'advancing to the next timer did not end the cycle with 40P01',
    );
    // s1 waited first, so its deadlock_timeout (1 s by default) fires first: s1 is the victim.
    assert(victim === 's1', `victim is ${victim}; s1 began waiting first, so its check finds the cycle`);
    const v = await ctx.paneView(victim);
    assert(v.output.includes('ERROR:  deadlock detected') && v.state === 'aborted', `victim ${victim}: ${v.state}: ${norm(v.output)}`);
    assert(/\b1 s\b/.test(await ctx.clock()), `clock after the deadlock_timeout: "${await ctx.clock()}"`);
    const s2 = await ctx.paneView('s2');
    assert(
      s2.state === 'idle-in-transaction' && /UPDATE 1/.test(s2.output),
      `s2 should get its row once s1 is cancelled: ${s2.state}: ${norm(s2.output)}`,
    );
    const shown = (await ctx.panes()).map((p) => p.session).join();
    assert(shown === 's1,s2', `lab player panes: [${shown}]`);
    await ctx.shot();
    while ((await ctx.position())[0] < total) await ctx.next();
    const end = await ctx.panes();
    // Each pane is a scrollback: the last output is the COMMIT's (ROLLBACK for the aborted s1).
    assert(
      end.map((p) => `${p.session}:${p.state}:${norm(p.output).split(' ').at(-1)}`).join() === 's1:idle:ROLLBACK,s2:idle:COMMIT',
      `at the end: ${JSON.stringify(end.map((p) => [p.session, p.state, norm(p.output)]))}`,
    );

    // Share link: a fresh browser context (empty localStorage) opens the same scenario, unplayed.
    await ctx.byTestId('lab-share').click();
    const url = await waitFor(
      async () => ((await ctx.byTestId('share-url').count()) > 0 ? await ctx.byTestId('share-url').inputValue() : ''),
      'no share URL after pressing Share',
    );
    assert(/#\/lab\?s=/.test(url), `share URL: ${url}`);
    const browser = ctx.context.browser();
    assert(browser, 'no browser behind the context');
    const other = await browser.newContext({ viewport: { width: 1440, height: 1000 }, locale: 'en-US' });
    try {
      const page = await other.newPage();
      const errors: string[] = [];
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`));
      await page.goto(url);
      await waitFor(
        async () =>
          /loaded from the link/.test(
            (await page
              .getByTestId('lab-message')
              .textContent()
              .catch(() => '')) ?? '',
          ),
        'the shared link did not load the scenario (no "Scenario loaded from the link" message)',
      );
      const opened = await labDocument(page);
      assert(
        JSON.stringify(opened) === JSON.stringify(built),
        `the share link opened a different scenario:\n  built  ${JSON.stringify(built)}\n  opened ${JSON.stringify(opened)}`,
      );
      assert((await page.getByTestId('player').count()) === 0, 'a shared link must not run anything before Play');
      await page.screenshot({ path: join(ROOT, 'test-results', 'e2e', 'lab-editor-shared.png'), fullPage: true });
      assert(errors.length === 0, `console errors in the fresh context:\n${errors.join('\n')}`);
    } finally {
      await other.close();
    }
  },
};

const labImport: Flow = {
  name: 'lab-import',
  title: 'lab: a .spec file through the file input fills the editor (title, sessions, steps, order) and plays',
  async run(ctx) {
    await ctx.page.goto(ctx.url('#/lab'));
    await waitFor(() => ctx.byTestId('lab-editor').isVisible(), 'the lab editor never appeared at #/lab');
    const text = [
      '# title.en: Imported: a NOWAIT check',
      '# title.ru: Импорт: проверка NOWAIT',
      "setup { CREATE TABLE jobs (id int PRIMARY KEY, state text NOT NULL); INSERT INTO jobs VALUES (1, 'new'), (2, 'new'); }",
      'teardown { DROP TABLE jobs; }',
      'session w1',
      'step w1lock { BEGIN; SELECT id FROM jobs WHERE id = 1 FOR UPDATE; }',
      'step w1end { COMMIT; }',
      'session w2',
      'step w2try { BEGIN; SELECT id FROM jobs WHERE id = 1 FOR UPDATE NOWAIT; }',
      'step w2end { ROLLBACK; }',
      'permutation w1lock w2try w1end w2end',
      'permutation w2try w1lock w2end w1end',
      '',
    ].join('\n');
    await ctx.byTestId('lab-import').setInputFiles({ name: 'nowait-check.spec', mimeType: 'text/plain', buffer: Buffer.from(text) });
    const msg = await waitFor(
      async () => ((await ctx.byTestId('lab-message').count()) > 0 ? await ctx.byTestId('lab-message').innerText() : ''),
      'no message after importing the file',
    );
    assert(/Imported the/.test(msg), `import message: "${norm(msg)}"`);
    assert(
      /lists 2 permutations; the first became the order/.test(msg),
      `the second permutation should be reported as dropped: "${norm(msg)}"`,
    );
    const doc = await labDocument(ctx.page);
    assert(doc.title === 'Imported: a NOWAIT check', `title after import: "${doc.title}"`);
    assert(doc.order === 'w1lock w2try w1end w2end', `order after import: "${doc.order}" (the first permutation)`);
    const summary = doc.sessions.map((s) => `${s.name}: ${s.steps.map((st) => st.name).join(' ')}`).join('; ');
    assert(summary === 'w1: w1lock w1end; w2: w2try w2end', `sessions after import: ${summary}`);
    assert(/FOR UPDATE NOWAIT/.test(doc.sessions[1].steps[0].sql), `w2try SQL: ${doc.sessions[1].steps[0].sql}`);
    await ctx.labPlayable('after the import');
    await ctx.byTestId('lab-play').click();
    await ctx.waitForCursor(0, 'opening the imported scenario', 40_000);
    await ctx.next();
    await ctx.next();
    const w2 = await ctx.paneView('w2');
    assert(/55P03/.test(w2.output), `w2's NOWAIT should fail with 55P03 while w1 holds the row: ${norm(w2.output)}`);
    await ctx.shot();
  },
};

/** Loads a template, runs every interleaving, returns the summary's numbers. */
async function exploreTemplate(ctx: FlowContext, id: string) {
  await ctx.byTestId('lab-template').selectOption(id);
  await waitFor(
    async () =>
      /Template loaded/.test(
        (await ctx
          .byTestId('lab-message')
          .textContent()
          .catch(() => '')) ?? '',
      ),
    `template ${id} did not load`,
  );
  await ctx.labPlayable(`template ${id}`);
  const count = Number(await ctx.byTestId('interleavings-count').getAttribute('data-count'));
  assert(count > 1 && count <= 200, `template ${id}: ${count} interleavings (expected a handful, under the default cap)`);
  await ctx.byTestId('lab-explore').click();
  const summary = ctx.byTestId('interleavings-summary');
  await waitFor(
    async () => (await summary.getAttribute('data-state')) === 'finished',
    `template ${id}: exploration did not finish`,
    90_000,
    200,
  );
  const n = async (attr: string) => Number(await summary.getAttribute(attr));
  const r = {
    count,
    total: await n('data-total'),
    deadlocks: await n('data-deadlocks'),
    errors: await n('data-errors'),
    clean: await n('data-clean'),
    stalled: await n('data-stalled'),
    rows: await ctx.byTestId('interleaving').count(),
  };
  assert(r.total === count && r.rows === count, `template ${id}: ran ${r.total} (${r.rows} rows listed) of ${count} interleavings`);
  assert(
    r.clean + r.deadlocks + r.errors + r.stalled === r.total,
    `template ${id}: clean ${r.clean} + deadlocks ${r.deadlocks} + errors ${r.errors} + stalled ${r.stalled} ≠ total ${r.total}`,
  );
  return r;
}

const labExplore: Flow = {
  name: 'lab-explore',
  title: 'lab: explore interleavings — unordered transfer deadlocks in some, the ORDER BY id FOR UPDATE fix in none',
  async run(ctx) {
    for (const f of ['transfer-unordered', 'transfer-ordered'])
      assert(readdirSync(TEMPLATES).includes(`${f}.spec`), `lessons/lab-templates/${f}.spec is missing`);
    await ctx.page.goto(ctx.url('#/lab'));
    await waitFor(() => ctx.byTestId('lab-editor').isVisible(), 'the lab editor never appeared at #/lab');
    const bad = await exploreTemplate(ctx, 'transfer-unordered');
    assert(bad.deadlocks > 0, `unordered transfer: no deadlock in any of ${bad.total} interleavings`);
    assert(bad.errors === 0, `unordered transfer: ${bad.errors} interleavings failed with a non-deadlock error`);
    const victims = await ctx.page.locator('[data-testid="interleaving"].deadlock').count();
    assert(victims === bad.deadlocks, `${victims} rows marked deadlock, summary says ${bad.deadlocks}`);
    await ctx.shot('unordered');
    const good = await exploreTemplate(ctx, 'transfer-ordered');
    assert(good.deadlocks === 0, `ordered transfer: ${good.deadlocks} deadlocks in ${good.total} interleavings (expected none)`);
    assert(good.errors === 0, `ordered transfer: ${good.errors} interleavings failed`);
    console.log(`      lab-explore: unordered ${JSON.stringify(bad)}; ordered ${JSON.stringify(good)}`);
    await ctx.shot();
  },
};

const retryLab: Flow = {
  name: 'retry-lab',
  title: 'retry lab: transfer, 4 workers × 4 tx on 3 rows — unordered deadlocks, ordered none; charts drawn',
  async run(ctx) {
    await ctx.page.goto(ctx.url('#/retry'));
    await waitFor(() => ctx.byTestId('retry-lab').isVisible(), 'the retry lab never appeared at #/retry');
    await ctx.byTestId('retry-workload').selectOption('transfer');
    await ctx.byTestId('retry-workers').fill('4');
    await ctx.byTestId('retry-transactions').fill('4');
    await ctx.byTestId('retry-rows').fill('3');
    await ctx.byTestId('retry-seed').fill('1');
    const picked = await ctx
      .byTestId('retry-strategy')
      .evaluateAll((els) => els.filter((e) => (e as HTMLInputElement).checked).map((e) => e.getAttribute('data-strategy')));
    assert(picked.join() === 'unordered,ordered', `strategies checked by default: [${picked}]`);
    await ctx.byTestId('retry-run').click();
    await waitFor(
      async () => (await ctx.byTestId('retry-status').getAttribute('data-state')) === 'finished',
      `the sweep did not finish (status ${await ctx.byTestId('retry-status').getAttribute('data-state')})`,
      90_000,
      200,
    );
    const results = await ctx.byTestId('retry-result').evaluateAll((els) =>
      els.map((e) => ({
        strategy: e.getAttribute('data-strategy'),
        workers: Number(e.getAttribute('data-workers')),
        deadlocks: Number(e.getAttribute('data-deadlocks')),
        committed: Number(e.getAttribute('data-committed')),
      })),
    );
    // The sweep runs 2 and 4 workers for each strategy.
    assert(results.length === 4, `expected 4 runs (2 strategies × 2, 4 workers), got ${JSON.stringify(results)}`);
    const sum = (s: string) => results.filter((r) => r.strategy === s).reduce((a, r) => a + r.deadlocks, 0);
    assert(sum('unordered') > 0, `unordered showed no deadlocks: ${JSON.stringify(results)}`);
    assert(sum('ordered') === 0, `ordered showed ${sum('ordered')} deadlocks: ${JSON.stringify(results)}`);
    for (const r of results)
      assert(r.committed === r.workers * 4, `every transaction should commit in the end (retries): ${JSON.stringify(r)}`);
    const invariants = await ctx.byTestId('retry-invariant').allInnerTexts();
    assert(invariants.length === 4 && invariants.every((t) => /pass|holds|ok/i.test(t)), `invariant column: ${JSON.stringify(invariants)}`);
    assert((await ctx.byTestId('retry-chart').count()) === 2, 'expected two charts (deadlocks, throughput)');
    const paths = await ctx.page.locator('[data-testid="retry-chart"] path').count();
    assert(paths === 4, `expected one line per strategy in each chart (4 paths), got ${paths}`);
    console.log(`      retry-lab: ${results.map((r) => `${r.strategy}@${r.workers}: ${r.deadlocks} deadlocks`).join(', ')}`);
    await ctx.shot();
  },
};

interface InterviewYaml {
  questions: { id: string; question: { en: string }; choices?: { id: string }[]; answer?: string; model: { en: string }; lesson: string }[];
}

const interview: Flow = {
  name: 'interview',
  title: 'interview: answer the first question right, see the verdict, the model answer and its lesson link',
  async run(ctx) {
    const data = parseYaml(readFileSync(join(LESSONS, 'interview', 'interview.yaml'), 'utf8')) as InterviewYaml;
    const q = data.questions[0];
    assert(q.choices && q.answer, `the first interview question (${q.id}) should be a quiz`);
    await ctx.page.goto(ctx.url('#/interview'));
    const item = ctx.page.locator(`[data-testid="interview-question"][data-question="${q.id}"]`);
    await waitFor(() => item.isVisible(), `interview question ${q.id} not shown at #/interview`);
    assert((await ctx.byTestId('interview-question').count()) === data.questions.length, 'not every interview question is listed');
    assert(
      norm((await item.locator('h3').textContent()) ?? '') === norm(q.question.en),
      `question text: ${await item.locator('h3').textContent()}`,
    );
    assert((await item.getAttribute('data-verdict')) === 'open', 'the question is not open before answering');
    assert((await item.getByTestId('interview-model').count()) === 0, 'the model answer is visible before answering');
    await item.locator(`[data-testid="interview-choice"][value="${q.answer}"]`).check();
    await item.getByTestId('interview-check').click();
    await waitFor(
      async () => (await item.getAttribute('data-verdict')) === 'right',
      `verdict after the right answer: ${await item.getAttribute('data-verdict')}`,
    );
    const model = norm((await item.getByTestId('interview-model').textContent()) ?? '');
    assert(model === norm(q.model.en), `model answer shown: "${model.slice(0, 80)}…"`);
    const proof = await item.getByTestId('interview-proof').getAttribute('href');
    assert(proof === `#/lessons/${q.lesson}/step/0`, `proof link: ${proof}`);
    const score = norm((await ctx.byTestId('interview-score').textContent()) ?? '');
    assert(score.startsWith(`1 of ${data.questions.length} answered, 1 right`), `score: "${score}"`);
    await ctx.shot();
  },
};

export const FLOWS: Flow[] = [
  home,
  classicDeadlock,
  classicDeadlockRu,
  dataViewMvcc,
  nowait,
  serializableWriteSkew,
  skipLocked,
  skipLockedRu,
  undo,
  watchdog,
  hostile,
  presenter,
  labEditor,
  labImport,
  labExplore,
  retryLab,
  interview,
];
