/**
 * Page-layout flows: the presenter stage (bounding boxes at 1280×720 and 1920×1080), the 390 px
 * layout, axe-core on every main page in both themes and languages, and the Content-Security-Policy.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Locator, Page } from 'playwright-core';
import { assert, norm, waitFor, type FlowContext } from '../harness';
import type { Flow } from '../flow';
import { scriptItems } from '../lessonData';

// ---------------------------------------------------------------------------------------------
// Content-Security-Policy

/** Parses a policy into directive → sources. */
function directives(policy: string): Map<string, string[]> {
  return new Map(
    policy
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...sources]) => [name.toLowerCase(), sources]),
  );
}

const csp: Flow = {
  name: 'csp',
  title: 'CSP (header + meta): own scripts/workers/wasm only; inline script, handlers and eval blocked; PGlite and libpg-query boot',
  async run(ctx) {
    const res = await ctx.page.goto(ctx.url('#/'));
    const header = res?.headers()['content-security-policy'] ?? '';
    assert(header, 'the preview server sends no Content-Security-Policy header');
    const meta = await ctx.page
      .locator('meta[http-equiv="Content-Security-Policy"]')
      .getAttribute('content', { timeout: 2000 })
      .catch(() => null);
    assert(meta !== null, 'the built index.html has no Content-Security-Policy <meta>');
    assert(norm(meta) === norm(header), `the <meta> policy "${meta}" differs from the header "${header}"`);
    const d = directives(header);
    const script = d.get('script-src') ?? d.get('default-src') ?? [];
    assert(
      script.length === 2 && script.includes("'self'") && script.includes("'wasm-unsafe-eval'"),
      `script-src must be exactly 'self' 'wasm-unsafe-eval', is: ${script.join(' ')}`,
    );
    const worker = d.get('worker-src') ?? script;
    assert(worker.length === 1 && worker[0] === "'self'", `worker-src must be 'self', is: ${worker.join(' ')}`);
    assert((d.get('object-src') ?? []).join() === "'none'", `object-src must be 'none', is: ${d.get('object-src')?.join(' ')}`);
    assert((d.get('default-src') ?? []).join() === "'self'", `default-src must be 'self', is: ${d.get('default-src')?.join(' ')}`);

    // Script a shared link or a lesson might smuggle in: none of it runs.
    const before = ctx.consoleErrors.length;
    const ran = await ctx.page.evaluate(async () => {
      const w = window as unknown as Record<string, unknown>;
      const s = document.createElement('script');
      s.textContent = 'window.__inlineRan = true';
      document.head.append(s);
      const img = document.createElement('img');
      img.setAttribute('onerror', 'window.__handlerRan = true');
      img.src = 'data:,not-an-image';
      document.body.append(img);
      await new Promise((r) => setTimeout(r, 300));
      img.remove();
      let evalRan = 'blocked';
      try {
        evalRan = String((0, eval)('6 * 7'));
      } catch (e) {
        evalRan = (e as Error).name;
      }
      let fnRan = 'blocked';
      try {
        fnRan = String(new Function('return 6 * 7')());
      } catch (e) {
        fnRan = (e as Error).name;
      }
      return { inline: w.__inlineRan === true, handler: w.__handlerRan === true, evalRan, fnRan };
    });
    assert(!ran.inline, 'an inline <script> added to the page ran');
    assert(!ran.handler, 'an inline event handler (onerror) ran');
    assert(ran.evalRan === 'EvalError', `eval() was not blocked: ${ran.evalRan}`);
    assert(ran.fnRan === 'EvalError', `new Function() was not blocked: ${ran.fnRan}`);
    // Violation reports arrive as events after the fact: wait for the eval one, then keep them out of the flow's error check.
    await waitFor(
      () => ctx.consoleErrors.slice(before).some((m) => /blocked eval/.test(m)),
      `the blocked eval raised no CSP violation report: ${JSON.stringify(ctx.consoleErrors.slice(before))}`,
      3000,
      50,
    );
    await ctx.page.waitForTimeout(200);
    const reported = ctx.consoleErrors.splice(before);
    assert(
      reported.some((m) => /script-src/.test(m)),
      `the blocked inline script raised no CSP violation report: ${JSON.stringify(reported)}`,
    );

    // PGlite (statements run) and libpg-query (statements are parsed: a syntax error is PostgreSQL's) in the engine worker.
    await ctx.openLesson('nowait', 1);
    await ctx.submitAdHoc('A', 'SELECT 41 + 1 AS answer');
    await waitFor(
      async () => (await ctx.paneView('A')).tables.some((t) => t.some((r) => r.includes('42'))),
      'SELECT 41 + 1 shows 42 under the CSP',
    );
    await ctx.submitAdHoc('B', 'SELEC 1');
    await waitFor(
      async () => (await ctx.pane('B').locator('[data-testid="pg-message"][data-sqlstate="42601"]').count()) > 0,
      'a syntax error (42601) is reported under the CSP',
    );
    // The lab's editor (CodeMirror writes its styles at run time) and the retry lab's worker load too.
    await ctx.page.goto(ctx.url('#/lab'));
    await waitFor(async () => (await ctx.page.locator('[data-testid="lab-blank"]').count()) > 0, 'the lab loads under the CSP');
    await ctx.shot();
  },
};

// ---------------------------------------------------------------------------------------------
// The classroom stage (presenter mode)

/** tsx compiles the page functions below with esbuild's keepNames, whose `__name` helper the page lacks. */
async function keepNames(page: Page): Promise<void> {
  await page.evaluate('globalThis.__name ??= (f) => f');
}

/** Why an element is not fully readable on screen: outside the viewport or cut by a scrolling/clipping ancestor; null when it is. */
async function unreadable(loc: Locator, what: string): Promise<string | null> {
  if ((await loc.count()) === 0) return `${what}: not on the page`;
  return loc.first().evaluate((el, what) => {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) return `${what}: has no size`;
    const eps = 1;
    let clip = { left: 0, top: 0, right: window.innerWidth, bottom: window.innerHeight };
    for (let a = el.parentElement; a; a = a.parentElement) {
      const cs = getComputedStyle(a);
      if (cs.overflowX !== 'visible' || cs.overflowY !== 'visible') {
        const ar = a.getBoundingClientRect();
        clip = {
          left: Math.max(clip.left, ar.left),
          top: Math.max(clip.top, ar.top),
          right: Math.min(clip.right, ar.right),
          bottom: Math.min(clip.bottom, ar.bottom),
        };
      }
    }
    if (r.left < clip.left - eps || r.top < clip.top - eps || r.right > clip.right + eps || r.bottom > clip.bottom + eps)
      return `${what}: box ${Math.round(r.left)},${Math.round(r.top)}–${Math.round(r.right)},${Math.round(r.bottom)} is cut at ${Math.round(clip.left)},${Math.round(clip.top)}–${Math.round(clip.right)},${Math.round(clip.bottom)}`;
    return null;
  }, what);
}

/** Every text on the stage smaller than `min` px (tag, size, text), and the narration's size. */
async function stageFonts(page: Page): Promise<{ small: string[]; narration: number; state: number }> {
  return page.evaluate(() => {
    const small: string[] = [];
    const root = document.querySelector('.app') ?? document.body;
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const text = (n.textContent ?? '').trim();
      const el = n.parentElement;
      if (!text || !el || el.closest('.sr-only, [aria-hidden="true"] svg defs')) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0 || r.bottom < 0 || r.top > window.innerHeight) continue;
      const cs = getComputedStyle(el);
      if (cs.visibility === 'hidden' || cs.display === 'none') continue;
      const size = parseFloat(cs.fontSize);
      if (size < 17.95)
        small.push(`${el.tagName.toLowerCase()}.${[...el.classList].join('.')} ${size.toFixed(1)}px "${text.slice(0, 30)}"`);
    }
    const px = (sel: string) => parseFloat(getComputedStyle(document.querySelector(sel) ?? document.body).fontSize);
    return { small, narration: px('[data-testid="narration-text"]'), state: px('[data-testid="session-state"]') };
  });
}

/** Pairs of graph labels / nodes whose boxes overlap, and whether the title is cut. */
async function collisions(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const box = (e: Element) => e.getBoundingClientRect();
    const hit = (a: DOMRect, b: DOMRect) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
    const labels = [...document.querySelectorAll('[data-testid="wait-for-graph"] .edge text')].map((e) => ({
      name: `edge label "${e.textContent}"`,
      r: box(e),
    }));
    const nodes = [...document.querySelectorAll('[data-testid="wait-for-graph"] [data-testid="wfg-node"]')]
      .flatMap((n) =>
        [...n.querySelectorAll('circle, text')].map((c) => ({
          name: `node ${n.getAttribute('data-session')} ${c.tagName} "${c.textContent ?? ''}"`,
          r: box(c),
        })),
      )
      .filter((x) => x.r.width > 0 && x.r.height > 0);
    for (let i = 0; i < labels.length; i++) {
      for (const n of nodes) if (hit(labels[i].r, n.r)) out.push(`${labels[i].name} overlaps ${n.name}`);
      for (let j = i + 1; j < labels.length; j++)
        if (hit(labels[i].r, labels[j].r)) out.push(`${labels[i].name} overlaps ${labels[j].name}`);
    }
    const svg = document.querySelector('[data-testid="wait-for-graph"]');
    if (svg) {
      const s = box(svg);
      for (const t of [...labels, ...nodes])
        if (t.r.left < s.left - 1 || t.r.right > s.right + 1 || t.r.top < s.top - 1 || t.r.bottom > s.bottom + 1)
          out.push(`${t.name} sticks out of the graph`);
    }
    const h = document.querySelector('.player h2') as HTMLElement | null;
    if (h && (h.scrollWidth > h.clientWidth + 1 || getComputedStyle(h).textOverflow === 'ellipsis'))
      out.push(`the lesson title is cut: "${h.textContent}"`);
    return out;
  });
}

/** The presenter-stage checks at the current viewport and step; `waits` lists the sessions expected to wait. */
async function checkStage(ctx: FlowContext, label: string, expect: { waits: string[]; errors: Record<string, string> }): Promise<void> {
  const { page } = ctx;
  await keepNames(page);
  const vp = page.viewportSize()!;
  const problems: string[] = [];
  const scroll = await page.evaluate(() => {
    const d = document.documentElement;
    const main = document.querySelector('main') as HTMLElement;
    return { w: d.scrollWidth - d.clientWidth, h: d.scrollHeight - d.clientHeight, main: main.scrollHeight - main.clientHeight };
  });
  if (scroll.w > 0 || scroll.h > 0 || scroll.main > 1)
    problems.push(`the page scrolls (x ${scroll.w}, y ${scroll.h}, main ${scroll.main} px)`);
  const need: [Locator, string][] = [
    [ctx.byTestId('presenter-toggle'), 'presenter-toggle'],
    [ctx.byTestId('theme-toggle'), 'theme-toggle'],
    [page.locator('.player h2'), 'lesson title'],
    [ctx.byTestId('step-next'), 'next button'],
    [ctx.byTestId('hide-answer'), 'hide-answer switch'],
    [ctx.byTestId('narration-text'), 'narration'],
    [ctx.byTestId('wait-for-graph'), 'wait-for graph'],
  ];
  for (const s of ['A', 'B']) {
    need.push([ctx.pane(s).getByTestId('session-state'), `session ${s} state`]);
    need.push([ctx.pane(s).getByTestId('stage-statement'), `session ${s} statement`]);
  }
  for (const s of expect.waits) need.push([ctx.pane(s).getByTestId('wait-text'), `session ${s} wait text`]);
  for (const [s, code] of Object.entries(expect.errors))
    need.push([ctx.pane(s).locator(`[data-testid="pg-message"][data-sqlstate="${code}"]`), `session ${s} error ${code}`]);
  if (expect.waits.length)
    need.push([
      ctx
        .byTestId('stage-wait-cells')
        .locator('[data-testid="matrix-cell"][data-conflict="true"][data-requested="ShareLock"][data-held="ExclusiveLock"]'),
      'the lit ShareLock × ExclusiveLock cell',
    ]);
  for (const [loc, what] of need) {
    const why = await unreadable(loc, what);
    if (why) problems.push(why);
  }
  const fonts = await stageFonts(page);
  const body = vp.width === 1280 ? 24 : 24 * Math.min(vp.height / 720, vp.width / 1280);
  if (fonts.narration < body - 0.5) problems.push(`narration text is ${fonts.narration}px (< ${body}px)`);
  if (fonts.state < body - 0.5) problems.push(`session state text is ${fonts.state}px (< ${body}px)`);
  if (fonts.small.length)
    problems.push(`text under 18px: ${fonts.small.slice(0, 6).join('; ')}${fonts.small.length > 6 ? ` … (${fonts.small.length})` : ''}`);
  problems.push(...(await collisions(page)));
  await ctx.shot(label, true);
  assert(problems.length === 0, `presenter stage at ${vp.width}×${vp.height}, ${label}:\n  ${problems.join('\n  ')}`);
}

const stagePresenter: Flow = {
  name: 'stage-presenter',
  title: 'presenter stage at 1280×720 and 1920×1080: narration, panes, graph, explaining cell on one screen; ≥24/18 px; no overlaps',
  viewport: { width: 1280, height: 720 },
  async run(ctx) {
    ctx.predictPolicy = 'skip';
    await ctx.openLesson('classic-deadlock', 5);
    await ctx.byTestId('presenter-toggle').click();
    await waitFor(() => ctx.page.evaluate(() => document.documentElement.classList.contains('presenter')), 'presenter mode did not start');
    await ctx.page.waitForTimeout(600); // the graph's nodes glide to their new layout
    await checkStage(ctx, '1280-cycle', { waits: ['A', 'B'], errors: {} });
    await ctx.key('ArrowRight', 6);
    await ctx.page.waitForTimeout(600);
    await checkStage(ctx, '1280-victim', { waits: [], errors: { B: '40P01' } });
    await ctx.page.setViewportSize({ width: 1920, height: 1080 });
    await ctx.page.waitForTimeout(600);
    await checkStage(ctx, '1920-victim', { waits: [], errors: { B: '40P01' } });
    await ctx.key('ArrowLeft', 5);
    await ctx.page.waitForTimeout(600);
    await checkStage(ctx, '1920-cycle', { waits: ['A', 'B'], errors: {} });
    // Russian labels are longer: the victim step still fits at 1280×720.
    await ctx.page.setViewportSize({ width: 1280, height: 720 });
    await ctx.byTestId('lang-switch').selectOption('ru');
    await ctx.key('ArrowRight', 6);
    await ctx.page.waitForTimeout(600);
    await checkStage(ctx, '1280-victim-ru', { waits: [], errors: { B: '40P01' } });
    await ctx.byTestId('lang-switch').selectOption('en');
    // The full matrices are one toggle away.
    await ctx.byTestId('stage-matrices-toggle').click();
    await waitFor(
      async () => (await ctx.byTestId('stage-matrices').locator('[data-testid="lock-matrix-table"]').count()) === 1,
      'the matrices toggle shows no matrix',
    );
    await ctx.byTestId('stage-matrices-toggle').click();
  },
};

const stageHideAnswer: Flow = {
  name: 'stage-hide-answer',
  title: 'presenter "hide the answer": an answered predict question is asked again, reveal runs the step; keyboard only',
  viewport: { width: 1280, height: 720 },
  async run(ctx) {
    ctx.predictPolicy = 'first';
    await ctx.openLesson('classic-deadlock');
    await ctx.page.locator('body').press('p');
    await waitFor(
      () => ctx.page.evaluate(() => document.documentElement.classList.contains('presenter')),
      'P did not start presenter mode',
    );
    let cursor = 0;
    while (ctx.predicts.length === 0) cursor = await ctx.next();
    // Answered once: stepping back and forward again runs the step without asking.
    await ctx.key('ArrowLeft', cursor - 1);
    await ctx.page.locator('body').press('ArrowRight');
    await ctx.waitForCursor(cursor, 'forward again with the answer saved');
    assert((await ctx.byTestId('predict').count()) === 0, 'the saved predict question was asked again with hide-answer off');
    await ctx.key('ArrowLeft', cursor - 1);
    // The switch, by keyboard (H): the class gets the question again, nothing of the answer shows.
    await ctx.page.locator('body').press('h');
    await waitFor(async () => (await ctx.byTestId('hide-answer').getAttribute('aria-checked')) === 'true', 'H did not turn on hide-answer');
    await ctx.page.locator('body').press('ArrowRight');
    await waitFor(
      async () => (await ctx.byTestId('predict').count()) === 1,
      'with hide-answer on, the predict question is not asked again',
    );
    const [held] = await ctx.position();
    assert(held === cursor - 1, `the step ran before the class could vote (at ${held}, expected ${cursor - 1})`);
    assert((await ctx.byTestId('predict-result').count()) === 0, 'the answer is shown while the class votes');
    await ctx.shot('vote', true);
    const reveal = ctx.byTestId('predict-reveal');
    assert((await reveal.count()) === 1, 'no "reveal the answer" button while hide-answer is on');
    await reveal.focus();
    await ctx.page.keyboard.press('Enter');
    await ctx.waitForCursor(cursor, 'reveal runs the step');
    await waitFor(async () => (await ctx.byTestId('predict-result').count()) === 1, 'reveal shows no answer');
    await ctx.shot('revealed', true);
  },
};

// ---------------------------------------------------------------------------------------------
// Accessibility (axe-core) in both themes and both languages

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Moderate, serious and critical axe-core violations on the page as it is now, one line each. */
async function axeViolations(page: Page, where: string): Promise<string[]> {
  // Evaluated through the DevTools protocol: the page's CSP (no inline script) does not apply to it.
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(AXE_SOURCE);
  const violations = (await page.evaluate(
    'window.axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ") + (n.failureSummary ? " — " + n.failureSummary.split("\\n").slice(1, 2).join("") : "")) })))',
  )) as { id: string; impact: string; help: string; nodes: string[] }[];
  return violations
    .filter((v) => v.impact === 'moderate' || v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${where}: [${v.impact}] ${v.id} (${v.help}): ${v.nodes.join(' | ')}`);
}

function a11yFlow(theme: 'light' | 'dark', lang: 'en' | 'ru'): Flow {
  return {
    name: `a11y-${theme}-${lang}`,
    title: `axe-core: no moderate, serious or critical violation on the lesson list, player (deadlock), lab (editor), retry lab (after a run), interview — ${theme}, ${lang}`,
    async run(ctx) {
      const found: string[] = [];
      await ctx.page.goto(ctx.url('#/'));
      await ctx.setLook({ theme, lang });
      await waitFor(async () => (await ctx.byTestId('lesson-row').count()) > 0, 'the lesson list never appeared');
      found.push(...(await axeViolations(ctx.page, 'lesson list')));

      await ctx.openLesson('classic-deadlock', 5);
      await waitFor(async () => (await ctx.edges()).length === 2, 'the deadlock cycle is not drawn at step 5');
      found.push(...(await axeViolations(ctx.page, 'player at the deadlock step')));

      await ctx.page.goto(ctx.url('#/lab'));
      await ctx.byTestId('lab-blank').click();
      await waitFor(async () => (await ctx.page.locator('.cm-editor').count()) > 0, 'the lab editor never opened');
      found.push(...(await axeViolations(ctx.page, 'lab (editor open)')));

      await ctx.page.goto(ctx.url('#/retry'));
      await waitFor(() => ctx.byTestId('retry-lab').isVisible(), 'the retry lab never appeared');
      await ctx.byTestId('retry-workers').fill('2');
      await ctx.byTestId('retry-transactions').fill('2');
      await ctx.byTestId('retry-run').click();
      await waitFor(
        async () => (await ctx.byTestId('retry-status').getAttribute('data-state')) === 'finished',
        'the retry run never finished',
        90_000,
      );
      found.push(...(await axeViolations(ctx.page, 'retry lab after a run')));

      await ctx.page.goto(ctx.url('#/interview'));
      await waitFor(
        async () => (await ctx.page.locator('[data-testid="interview-check"]').count()) > 0,
        'the interview page never appeared',
      );
      found.push(...(await axeViolations(ctx.page, 'interview')));
      assert(
        found.length === 0,
        `axe-core (${theme}, ${lang}) found ${found.length} moderate/serious/critical violations:\n  ${found.join('\n  ')}`,
      );
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Small screens (390×844)

/** How far the page is wider than the viewport, and the widest elements that stick out. */
async function horizontalOverflow(page: Page): Promise<{ by: number; culprits: string[] }> {
  await keepNames(page);
  return page.evaluate(() => {
    const d = document.documentElement;
    const culprits: string[] = [];
    for (const el of document.querySelectorAll('body *')) {
      const r = el.getBoundingClientRect();
      if (r.width > 0 && r.right > d.clientWidth + 1 && culprits.length < 5)
        culprits.push(
          `${el.tagName.toLowerCase()}${el.getAttribute('data-testid') ? `[${el.getAttribute('data-testid')}]` : ''} right ${Math.round(r.right)}`,
        );
    }
    return { by: d.scrollWidth - d.clientWidth, culprits };
  });
}

/** Timeline tick labels that touch each other. */
async function tickCollisions(page: Page): Promise<string[]> {
  await keepNames(page);
  return page.evaluate(() => {
    const ticks = [
      ...document.querySelectorAll('[data-testid="timeline"] .tick text, .panel.timeline svg g.axis text, .panel.timeline svg text.tick'),
    ];
    const all = ticks.length
      ? ticks
      : [...document.querySelectorAll('.panel.timeline svg text')].filter((t) => /\d/.test(t.textContent ?? ''));
    const boxes = all.map((t) => ({ text: t.textContent ?? '', r: t.getBoundingClientRect() })).sort((a, b) => a.r.left - b.r.left);
    const out: string[] = [];
    for (let i = 1; i < boxes.length; i++)
      if (Math.abs(boxes[i].r.top - boxes[i - 1].r.top) < 4 && boxes[i].r.left < boxes[i - 1].r.right + 2)
        out.push(`"${boxes[i - 1].text}" runs into "${boxes[i].text}"`);
    return out;
  });
}

const phone: Flow = {
  name: 'stage-390',
  title:
    '390×844: no horizontal overflow on the lesson list, player, lab, retry lab, interview (EN and RU); the 8×8 matrix fits; timeline ticks apart',
  viewport: { width: 390, height: 844 },
  async run(ctx) {
    const problems: string[] = [];
    const check = async (where: string) => {
      const o = await horizontalOverflow(ctx.page);
      if (o.by > 0) problems.push(`${where}: the page is ${o.by}px wider than the screen (${o.culprits.join(', ')})`);
    };
    for (const lang of ['en', 'ru'] as const) {
      await ctx.page.goto(ctx.url('#/'));
      await ctx.byTestId('lang-switch').selectOption(lang);
      await waitFor(async () => (await ctx.byTestId('lesson-row').count()) > 0, 'the lesson list never appeared');
      await check(`lesson list (${lang})`);
      await ctx.page.goto(ctx.url('#/lab'));
      await ctx.byTestId('lab-blank').click();
      await waitFor(async () => (await ctx.page.locator('.cm-editor').count()) > 0, 'the lab editor never opened');
      await check(`lab (${lang})`);
      if (lang === 'en') await ctx.shot('lab');
      await ctx.page.goto(ctx.url('#/retry'));
      await waitFor(() => ctx.byTestId('retry-lab').isVisible(), 'the retry lab never appeared');
      await check(`retry lab (${lang})`);
      await ctx.page.goto(ctx.url('#/interview'));
      await waitFor(
        async () => (await ctx.page.locator('[data-testid="interview-check"]').count()) > 0,
        'the interview page never appeared',
      );
      await check(`interview (${lang})`);
    }
    await ctx.page.goto(ctx.url('#/'));
    await ctx.byTestId('lang-switch').selectOption('en');
    await waitFor(async () => (await ctx.byTestId('lesson-row').count()) > 0, 'the lesson list never appeared');
    await ctx.shot('list');
    await ctx.openLesson('classic-deadlock', 6);
    await check('player at the victim step');
    const matrix = await ctx.page.locator('.panel.matrix').evaluate((el) => el.scrollWidth - el.clientWidth);
    if (matrix > 0) problems.push(`the lock matrices are ${matrix}px wider than their panel (they scroll sideways)`);
    problems.push(...(await tickCollisions(ctx.page)).map((m) => `timeline: ${m}`));
    await ctx.shot('player');
    assert(problems.length === 0, `at 390×844:\n  ${problems.join('\n  ')}`);
  },
};

// ---------------------------------------------------------------------------------------------
// Russian UI: no English left (time units, row-lock badges, the file chooser)

const russian: Flow = {
  name: 'stage-ru-units',
  title: 'RU: time units (с, мс), row-lock badge, the lab file button are Russian; no English time units on the player',
  async run(ctx) {
    await ctx.page.goto(ctx.url('#/'));
    await ctx.byTestId('lang-switch').selectOption('ru');
    await ctx.openLesson('classic-deadlock', 1);
    const badge = ((await ctx.byTestId('row-lock-badge').first().textContent()) ?? '').trim();
    assert(/^A: UPDATE \(без ключа\)$/.test(norm(badge)), `row-lock badge in Russian is "${badge}"`);
    await ctx.openLesson('classic-deadlock', 6);
    const clock = await ctx.clock();
    assert(/^t = 4 с$/.test(clock), `the clock reads "${clock}", expected "t = 4 с"`);
    const english = await ctx.page.evaluate(() => {
      const text = (document.querySelector('[data-testid="player"]') as HTMLElement).innerText;
      const svgText = [...document.querySelectorAll('[data-testid="player"] svg text')].map((t) => t.textContent ?? '').join(' ');
      const labels = [...document.querySelectorAll('[data-testid="player"] [aria-label], [data-testid="player"] title')]
        .map((e) => e.getAttribute('aria-label') ?? e.textContent ?? '')
        .join(' ');
      return `${text} ${svgText} ${labels}`.match(/\b\d+(?:[.,]\d+)? ?(?:ms|s|min)\b/g) ?? [];
    });
    assert(english.length === 0, `English time units on the Russian player: ${JSON.stringify([...new Set(english)].slice(0, 8))}`);
    const advance = await ctx.page.locator('.clock .buttons button').allTextContents();
    assert(
      advance.some((b) => norm(b) === '+100 мс') && advance.some((b) => norm(b) === '+1 с'),
      `advance buttons read ${JSON.stringify(advance)}`,
    );
    await ctx.page.goto(ctx.url('#/lab'));
    const file = ctx.page.locator('label.file');
    await waitFor(async () => (await file.count()) === 1, 'the lab import label never appeared');
    const label = norm((await file.innerText()) ?? '');
    assert(/Выбрать файл/.test(label), `the file import button is not Russian: "${label}"`);
    const native = await ctx.byTestId('lab-import').evaluate((el) => el.getBoundingClientRect().width);
    assert(native <= 1, `the browser's own file input (its "Choose File" button) is visible, ${native}px wide`);
    await ctx.shot();
  },
};

// ---------------------------------------------------------------------------------------------
// The diagnostics lesson (four sessions, an observer with wide catalog queries)

const diagnostics: Flow = {
  name: 'stage-diagnostics',
  title: 'diagnose-blocking at 1440×900: the observer pane O gets a full row; its query is not a tall column and its result is not cut off',
  viewport: { width: 1440, height: 900 },
  async run(ctx) {
    ctx.predictPolicy = 'skip';
    const items = scriptItems('diagnose-blocking');
    const at = items.findIndex((it) => it.session === 'O' && /pg_blocking_pids/.test(it.sql ?? '')) + 1;
    assert(at > 0, 'diagnose-blocking has no observer step with pg_blocking_pids');
    const problems: string[] = [];
    for (const step of [at, items.length]) {
      await ctx.openLesson('diagnose-blocking', step);
      const o = await ctx.pane('O').evaluate((el) => {
        const r = el.getBoundingClientRect();
        const cut = [...el.querySelectorAll('table.result')].some((t) => {
          const box = t.parentElement as HTMLElement;
          const scrolls = box.scrollWidth > box.clientWidth && getComputedStyle(box).overflowX !== 'visible' && box.tabIndex >= 0;
          return t.getBoundingClientRect().right > r.right + 1 && !scrolls;
        });
        // A query squeezed into a narrow column shows as a script line much narrower than its pane.
        const narrowest = Math.min(...[...el.querySelectorAll('[data-testid="script-line"]')].map((l) => l.getBoundingClientRect().width));
        return { width: r.width, narrowest, cut };
      });
      const grid = await ctx.page.locator('.sessions').evaluate((el) => el.getBoundingClientRect().width);
      if (o.width < grid * 0.9)
        problems.push(`step ${step}: pane O is ${Math.round(o.width)}px wide in a ${Math.round(grid)}px session grid`);
      if (o.narrowest < o.width * 0.8)
        problems.push(
          `step ${step}: a script line of pane O is ${Math.round(o.narrowest)}px wide in a ${Math.round(o.width)}px pane (its query wraps into a column)`,
        );
      if (o.cut) problems.push(`step ${step}: a result table of pane O is cut off on the right`);
      await ctx.shot(`step-${step}`);
    }
    assert(problems.length === 0, problems.join('\n'));
  },
};

export const FLOWS: Flow[] = [
  csp,
  diagnostics,
  russian,
  phone,
  stagePresenter,
  stageHideAnswer,
  a11yFlow('light', 'en'),
  a11yFlow('dark', 'en'),
  a11yFlow('light', 'ru'),
  a11yFlow('dark', 'ru'),
];
