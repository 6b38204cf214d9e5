/**
 * The README screenshot: `node --import tsx tests/e2e/screenshot.ts [out.png]` (after `vite build`).
 *
 * Serves dist/ with Vite's preview server, plays classic-deadlock in headless Chromium through the
 * UI (answering its predict questions right) up to the moment both sessions wait in the cycle,
 * and saves the 1440 px wide viewport to docs/screenshot.png: the wait-for graph with the cycle,
 * both sessions waiting, the clock with B's deadlock_timeout, the timeline and the lit cell of the
 * table-level lock matrix. See docs/e2e.md.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ROOT, launchChromium, previewDist } from './browser';
import { assert, FlowContext, norm } from './harness';

const OUT = resolve(process.argv[2] ?? join(ROOT, 'docs', 'screenshot.png'));
const VIEWPORT = { width: 1440, height: 1160 };

interface Checkpoint {
  question: { en: string };
  answer: string;
}

async function main(): Promise<void> {
  if (!existsSync(join(ROOT, 'dist', 'index.html'))) throw new Error('no dist/: run `npx vite build` first');
  const lesson = parseYaml(readFileSync(join(ROOT, 'lessons', 'classic-deadlock.yaml'), 'utf8')) as { steps: { predict?: Checkpoint }[] };
  const checkpoints = lesson.steps.flatMap((s) => (s.predict ? [s.predict] : []));
  const { server, baseUrl } = await previewDist();
  const browser = await launchChromium();
  try {
    const context = await browser.newContext({ viewport: VIEWPORT, locale: 'en-US', colorScheme: 'light' });
    const ctx = await FlowContext.create(context, baseUrl, dirname(OUT), 'readme');
    ctx.predictPolicy = (_key, question) => checkpoints.find((c) => norm(c.question.en) === question)?.answer ?? null;
    await ctx.openLesson('classic-deadlock');
    const [, total] = await ctx.position();
    for (;;) {
      const cursor = await ctx.next();
      const s = await ctx.states();
      if (s.A === 'waiting' && s.B === 'waiting') break;
      assert(cursor < total, 'classic-deadlock ended without both sessions waiting');
    }
    const edges = await ctx.edges();
    assert(edges.includes('A->B (cycle)') && edges.includes('B->A (cycle)'), `no cycle drawn: [${edges}]`);
    // Nothing hovered or focused; let the graph's fade-in finish.
    await ctx.page.mouse.move(0, 0);
    await ctx.page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await ctx.page.waitForTimeout(600);
    await ctx.page.screenshot({ path: OUT, animations: 'disabled' });
    ctx.assertNoConsoleErrors();
    console.log(`saved ${OUT} (${VIEWPORT.width}×${VIEWPORT.height})`);
    await context.close();
  } finally {
    await browser.close();
    await server.close();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
