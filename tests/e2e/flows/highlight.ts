/**
 * Syntax highlighting: the session panes, the presenter stage and the lab editor colour SQL with
 * one Lezer grammar and one palette (src/ui/model/syntax.ts, app.css --syn-*), in both themes.
 */
import { dirname, join } from 'node:path';
import { assert, waitFor, type FlowContext } from '../harness';
import type { Flow } from '../flow';

/** Colours of the SQL tokens under `root` (the first element of each syn-* class). */
async function tokenColours(ctx: FlowContext, root: string): Promise<Record<string, string>> {
  return ctx.page.evaluate((sel) => {
    const out: Record<string, string> = {};
    for (const el of document.querySelectorAll(`${sel} [class^="syn-"]`)) {
      const cls = el.classList[0];
      if (!(cls in out)) out[cls] = getComputedStyle(el).color;
    }
    return out;
  }, root);
}

const panes: Flow = {
  name: 'highlight-panes',
  title:
    'SQL in session panes and the lab editor: one Lezer grammar, one palette per theme (keywords, numbers, strings coloured); text unchanged',
  viewport: { width: 1440, height: 900 },
  async run(ctx) {
    await ctx.openLesson('classic-deadlock', 4);
    const line = '[data-testid="script-line"][data-outcome="current"]';
    const outDir = dirname(await ctx.shot('open'));
    const seen: Record<string, Record<string, string>> = {};
    for (const theme of ['light', 'dark'] as const)
      for (const lang of ['en', 'ru'] as const) {
        await ctx.setLook({ theme, lang });
        const colours = await waitFor(async () => {
          const c = await tokenColours(ctx, line);
          return c['syn-keyword'] && c['syn-number'] ? c : null;
        }, `${theme}/${lang}: the current script line has no highlighted keyword and number`);
        const text = await ctx.page.locator(`${line} code`).first().textContent();
        assert(text && /UPDATE accounts SET balance/.test(text), `the current line reads "${text}"`);
        const plain = await ctx.page
          .locator(`${line} code`)
          .first()
          .evaluate((el) => getComputedStyle(el).color);
        assert(colours['syn-keyword'] !== plain, `${theme}/${lang}: keywords are not coloured (${plain})`);
        assert(colours['syn-keyword'] !== colours['syn-number'], `${theme}/${lang}: keywords and numbers share a colour`);
        if (seen[theme]) assert(JSON.stringify(seen[theme]) === JSON.stringify(colours), `${theme}: colours change with the language`);
        seen[theme] = colours;
        await ctx.page
          .locator('[data-testid="session-pane"]', { has: ctx.page.locator(line) })
          .screenshot({ path: join(outDir, `highlight-panes-${theme}-${lang}.png`), animations: 'disabled' });
      }
    assert(seen.light['syn-keyword'] !== seen.dark['syn-keyword'], 'the dark theme keeps the light keyword colour');

    // A lesson's Go snippet in the code panel: its own Lezer grammar, the same palette.
    await ctx.openLesson('retry-backoff');
    const code = '[data-testid="code-panel"] [data-testid="highlighted-code"]';
    const goColours = await waitFor(async () => {
      const c = await tokenColours(ctx, code);
      return c['syn-keyword'] && c['syn-string'] ? c : null;
    }, 'the Go snippet has no highlighted keyword and string');
    assert(
      goColours['syn-keyword'] === seen.dark['syn-keyword'],
      `Go keyword ${goColours['syn-keyword']}, SQL keyword ${seen.dark['syn-keyword']}`,
    );
    await ctx.page
      .locator('[data-testid="code-panel"]')
      .screenshot({ path: join(outDir, 'highlight-panes-go-dark-ru.png'), animations: 'disabled' });

    // The lab editor (CodeMirror) colours the same tokens with the same palette.
    await ctx.page.goto(ctx.url('#/lab?template=transfer-unordered'));
    for (const theme of ['dark', 'light'] as const) {
      await ctx.setLook({ theme });
      const editor = await waitFor(async () => {
        const c = await tokenColours(ctx, '.cm-content');
        return c['syn-keyword'] ? c : null;
      }, `${theme}: the lab editor shows no syn-keyword token`);
      assert(
        editor['syn-keyword'] === seen[theme]['syn-keyword'],
        `${theme}: editor keyword ${editor['syn-keyword']}, pane ${seen[theme]['syn-keyword']}`,
      );
    }
    await ctx.shot('lab');
  },
};

export const FLOWS: Flow[] = [panes];
