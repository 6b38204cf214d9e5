/**
 * Page-layout flows: the presenter stage (bounding boxes at 1280×720 and 1920×1080), the 390 px
 * layout, axe-core on every main page in both themes and languages, and the Content-Security-Policy.
 */
import { createRequire } from 'node:module';
import type { Locator, Page } from 'playwright-core';
import { assert, norm, waitFor, type FlowContext } from '../harness';
import type { Flow } from '../flow';
import { lessonYaml } from '../lessonData';

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

export const FLOWS: Flow[] = [csp];
