/**
 * Helpers for the e2e flows: a fresh page per flow, console-error and dialog capture, screenshots,
 * polling assertions, and player helpers that act only through the real UI (buttons, keys, inputs).
 */
import { join } from 'node:path';
import type { BrowserContext, ConsoleMessage, Locator, Page } from 'playwright-core';

export class AssertionError extends Error {}

export function assert(cond: unknown, message: string): asserts cond {
  if (!cond) throw new AssertionError(message);
}

/** Collapses whitespace, for comparing rendered text with YAML text. */
export const norm = (s: string): string => s.replace(/\s+/g, ' ').trim();

/** Polls `probe` until it returns a truthy value; fails with `message` (plus the last value seen). */
export async function waitFor<T>(probe: () => Promise<T> | T, message: string, timeoutMs = 15_000, everyMs = 100): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v as NonNullable<T>;
      last = v;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > end) {
      const extra =
        lastError instanceof Error
          ? ` (last error: ${lastError.message.split('\n')[0]})`
          : last !== undefined
            ? ` (last value: ${JSON.stringify(last)})`
            : '';
      throw new AssertionError(`${message} [after ${timeoutMs / 1000} s]${extra}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** What one session pane shows. */
export interface PaneView {
  session: string;
  state: string;
  /** "pid 4101 · xid 750" */
  ids: string;
  /** The output area (results, errors, wait text) as rendered text. */
  output: string;
  /** Every cell of every result table in the latest output block (what psql printed last), row by row. */
  tables: string[][][];
}

/** The player as the learner sees it, for comparing two moments. */
export interface PlayerView {
  cursor: number;
  total: number;
  clock: string;
  panes: PaneView[];
  edges: string[];
}

/**
 * How `next()` / `key('ArrowRight')` answer a predict checkpoint that holds a step back:
 * skip it, pick the first choice, or pick the choice id a function returns for the checkpoint
 * (its key, the predicted step name in `data-key`, and the question as shown); null skips.
 */
export type PredictPolicy = 'skip' | 'first' | ((key: string, question: string) => string | null);

export class FlowContext {
  readonly consoleErrors: string[] = [];
  readonly dialogs: string[] = [];
  /** Every checkpoint met while stepping: its key and the choice given (null = skipped). */
  readonly predicts: { key: string; choice: string | null }[] = [];
  predictPolicy: PredictPolicy = 'first';
  private shots = new Set<string>();

  private constructor(
    readonly context: BrowserContext,
    readonly page: Page,
    readonly baseUrl: string,
    private readonly outDir: string,
    readonly flow: string,
  ) {}

  static async create(context: BrowserContext, baseUrl: string, outDir: string, flow: string): Promise<FlowContext> {
    const page = await context.newPage();
    const ctx = new FlowContext(context, page, baseUrl, outDir, flow);
    page.on('console', (m: ConsoleMessage) => {
      if (m.type() === 'error') ctx.consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => ctx.consoleErrors.push(`uncaught: ${e.message}`));
    // The suite runs under the app's Content-Security-Policy: a violation in the page or in an
    // engine worker fails the flow like a console error.
    await page.addInitScript(() =>
      document.addEventListener('securitypolicyviolation', (e) =>
        console.error(
          `CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline code'} at ${e.sourceFile}:${e.lineNumber}:${e.columnNumber}`,
        ),
      ),
    );
    page.on('worker', (w) =>
      w.on('console', (m) => {
        if (m.type() === 'error' && /Content Security Policy|CSP/i.test(m.text())) ctx.consoleErrors.push(`worker: ${m.text()}`);
      }),
    );
    page.on('dialog', (d) => {
      ctx.dialogs.push(`${d.type()}: ${d.message()}`);
      void d.dismiss().catch(() => undefined);
    });
    page.setDefaultTimeout(20_000);
    return ctx;
  }

  assertNoConsoleErrors(): void {
    assert(this.consoleErrors.length === 0, `console errors on the page:\n${this.consoleErrors.join('\n')}`);
  }

  /** Saves test-results/e2e/<flow>.png, or <flow>-<tag>.png. Full page unless `viewportOnly`. */
  async shot(tag?: string, viewportOnly = false): Promise<string> {
    const name = tag ? `${this.flow}-${tag}.png` : `${this.flow}.png`;
    const path = join(this.outDir, name);
    await this.page.screenshot({ path, fullPage: !viewportOnly, animations: 'disabled' });
    this.shots.add(name);
    return path;
  }

  async failureShot(): Promise<void> {
    try {
      await this.page.screenshot({ path: join(this.outDir, `${this.flow}-failure.png`), fullPage: true, timeout: 5000 });
    } catch {
      /* the page may be gone */
    }
  }

  url(hash: string): string {
    return `${this.baseUrl}${hash}`;
  }

  byTestId(id: string): Locator {
    return this.page.getByTestId(id);
  }

  pane(session: string): Locator {
    return this.page.locator(`[data-testid="session-pane"][data-session="${session}"]`);
  }

  /** Replaces the text of the n-th CodeMirror SQL field with this test id, typing as a user would. */
  async setSql(testid: string, index: number, sql: string): Promise<void> {
    const content = this.byTestId(testid).nth(index).locator('.cm-content');
    await content.click();
    await this.page.keyboard.press('ControlOrMeta+A');
    await this.page.keyboard.press('Delete');
    await this.page.keyboard.insertText(sql);
    await waitFor(
      async () => norm((await content.innerText()) ?? '') === norm(sql),
      `SQL field ${testid}[${index}] does not show "${sql}"`,
      3000,
      50,
    );
  }

  /** Waits until the lab reports no problem and Play is enabled. */
  async labPlayable(what: string): Promise<void> {
    await waitFor(
      async () => (await this.byTestId('lab-issue').count()) === 0 && (await this.byTestId('lab-play').isEnabled()),
      `${what}: the lab still reports problems: ${JSON.stringify(await this.byTestId('lab-issue').allInnerTexts())}`,
    );
  }

  /** Sets the language and/or the theme through the header controls and waits until the page shows them. */
  async setLook(look: { lang?: 'en' | 'ru'; theme?: 'light' | 'dark' }): Promise<void> {
    if (look.lang) await this.byTestId('lang-switch').selectOption(look.lang);
    if (look.theme) {
      const dark = await this.page.evaluate(() => document.documentElement.dataset.theme === 'dark');
      if (dark !== (look.theme === 'dark')) await this.byTestId('theme-toggle').click();
    }
    await waitFor(
      () =>
        this.page.evaluate(
          ([t, l]) => (!t || (document.documentElement.dataset.theme ?? 'light') === t) && (!l || document.documentElement.lang === l),
          [look.theme, look.lang],
        ),
      `theme ${look.theme ?? '(any)'} / language ${look.lang ?? '(any)'} not applied`,
    );
  }

  /** [cursor, total] from the step counter ("Step 3 of 10" / "Шаг 3 из 10"). */
  async position(): Promise<[number, number]> {
    const text = (await this.byTestId('step-position').textContent({ timeout: 2000 })) ?? '';
    const m = /(\d+)\D+(\d+)/.exec(text);
    if (!m) throw new AssertionError(`step counter unreadable: "${text}"`);
    return [Number(m[1]), Number(m[2])];
  }

  async busy(): Promise<boolean> {
    return (await this.page.locator('.player .busy').count()) > 0;
  }

  /** Waits until the player shows `cursor` and is not busy. */
  async waitForCursor(cursor: number, what: string, timeoutMs = 20_000): Promise<void> {
    await waitFor(
      async () => {
        if ((await this.byTestId('session-pane').count()) === 0) return false;
        const [c] = await this.position();
        return c === cursor && !(await this.busy());
      },
      `${what}: the player never settled at step ${cursor}`,
      timeoutMs,
    );
  }

  /**
   * Waits until the address bar ends with `suffix`. The app writes the step into the URL in the
   * frame after the one that draws it (App.svelte's syncUrl), so the URL may trail the step counter
   * by a frame; a second is far more than a frame, and a URL that never follows still fails.
   */
  async expectUrl(suffix: string, what: string, timeoutMs = 2000): Promise<void> {
    await waitFor(() => this.page.url().endsWith(suffix), `${what}: URL is ${this.page.url()}, expected …${suffix}`, timeoutMs, 20);
  }

  /** Opens `#/lessons/<id>/step/<step>` and waits until the engine shows that step. */
  async openLesson(id: string, step = 0): Promise<void> {
    await this.page.goto(this.url(`#/lessons/${id}/step/${step}`));
    await this.waitForCursor(step, `opening lesson ${id}`, 40_000);
  }

  /**
   * Clicks "Next step" and waits for the engine's answer. When a predict checkpoint holds the
   * step back, answers or skips it first (see `predictPolicy`).
   */
  async next(): Promise<number> {
    const [c, total] = await this.position();
    assert(c < total, `next: already at the end (${c} of ${total})`);
    const btn = this.byTestId('step-next');
    assert(await btn.isEnabled(), `next: step-next is disabled at step ${c}`);
    await btn.click();
    await this.settleForward(c + 1, `step-next from ${c}`);
    return c + 1;
  }

  /**
   * After a forward action: waits until the player shows `cursor`, or until it asks a predict
   * question instead; then answers it per `predictPolicy` and waits for the step to run.
   */
  private async settleForward(cursor: number, what: string, timeoutMs = 20_000): Promise<void> {
    const outcome = await waitFor(
      async () => {
        if ((await this.byTestId('predict').count()) > 0) return 'asked';
        if ((await this.byTestId('session-pane').count()) === 0) return null;
        const [c] = await this.position();
        return c === cursor && !(await this.busy()) ? 'moved' : null;
      },
      `${what}: the player neither settled at step ${cursor} nor asked a predict question`,
      timeoutMs,
    );
    if (outcome === 'moved') return;
    const [held] = await this.position();
    assert(held === cursor - 1, `${what}: a predict question is shown, but the step counter moved on to ${held}`);
    await this.answerPredict();
    await this.waitForCursor(cursor, `${what}, after the predict question`, timeoutMs);
  }

  /** Answers (or skips) the predict question on screen according to `predictPolicy`. */
  async answerPredict(): Promise<{ key: string; choice: string | null }> {
    const form = this.byTestId('predict');
    const key = (await form.getAttribute('data-key')) ?? '';
    const choices = await form.getByTestId('predict-choice').evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value));
    assert(choices.length >= 2, `predict ${key}: expected at least two choices, got [${choices}]`);
    const check = form.getByTestId('predict-check');
    assert(await check.isDisabled(), `predict ${key}: "check" is enabled before a choice was made`);
    const question = norm((await form.getByTestId('predict-question').textContent()) ?? '');
    const policy = this.predictPolicy;
    const choice = policy === 'skip' ? null : policy === 'first' ? choices[0] : policy(key, question);
    if (choice === null) {
      await form.getByTestId('predict-skip').click();
    } else {
      assert(choices.includes(choice), `predict ${key}: no choice "${choice}" among [${choices}]`);
      await form.locator(`[data-testid="predict-choice"][value="${choice}"]`).check();
      await waitFor(() => check.isEnabled(), `predict ${key}: "check" stays disabled after choosing ${choice}`, 3000, 50);
      await check.click();
    }
    await waitFor(async () => (await this.byTestId('predict').count()) === 0, `predict ${key}: the question stays open after answering`);
    const answered = { key, choice };
    this.predicts.push(answered);
    return answered;
  }

  /** Clicks "Previous step" (undo) and waits for the restored state. */
  async prev(): Promise<number> {
    const [c] = await this.position();
    await this.byTestId('step-prev').click();
    await this.waitForCursor(c - 1, `step-prev from ${c}`);
    return c - 1;
  }

  /**
   * Presses a key on the page body (player shortcuts) and waits for the cursor; → answers a
   * predict question on the way like `next()`.
   */
  async key(key: string, expectCursor: number): Promise<void> {
    await this.page.locator('body').press(key);
    if (key === 'ArrowRight') await this.settleForward(expectCursor, `key ${key}`);
    else await this.waitForCursor(expectCursor, `key ${key}`);
  }

  async panes(): Promise<PaneView[]> {
    return this.byTestId('session-pane').evaluateAll((els) =>
      els.map((el) => {
        const out = el.querySelector('.output') as HTMLElement | null;
        // The output is a scrollback: the latest block is the last step's (or the running one's).
        const blocks = out?.querySelectorAll('[data-testid^="scroll-"]');
        const latest = blocks?.length ? blocks[blocks.length - 1] : out;
        return {
          session: el.getAttribute('data-session') ?? '',
          state: el.getAttribute('data-state') ?? '',
          ids: (el.querySelector('.ids') as HTMLElement | null)?.innerText.trim() ?? '',
          output: out?.innerText ?? '',
          tables: [...(latest?.querySelectorAll('table.result') ?? [])].map((t) =>
            [...t.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')),
          ),
        };
      }),
    );
  }

  async paneView(session: string): Promise<PaneView> {
    const p = (await this.panes()).find((x) => x.session === session);
    assert(p, `no session pane for ${session}`);
    return p;
  }

  async states(): Promise<Record<string, string>> {
    return Object.fromEntries((await this.panes()).map((p) => [p.session, p.state]));
  }

  async clock(): Promise<string> {
    return ((await this.byTestId('clock').textContent()) ?? '').trim();
  }

  async edges(): Promise<string[]> {
    return this.byTestId('wfg-edge').evaluateAll((els) =>
      els
        .map(
          (e) =>
            `${e.getAttribute('data-from')}->${e.getAttribute('data-to')}${e.getAttribute('data-in-cycle') === 'true' ? ' (cycle)' : ''}`,
        )
        .sort(),
    );
  }

  async view(): Promise<PlayerView> {
    const [cursor, total] = await this.position();
    return { cursor, total, clock: await this.clock(), panes: await this.panes(), edges: await this.edges() };
  }

  /** Types SQL into a session's ad-hoc input and presses its Run button (no waiting). */
  async submitAdHoc(session: string, sql: string): Promise<void> {
    const input = this.pane(session).locator('form.adhoc textarea');
    await input.fill(sql);
    const run = this.pane(session).locator('form.adhoc button[type="submit"]');
    assert(await run.isEnabled(), `ad-hoc Run button of session ${session} is disabled`);
    await run.click();
  }
}

/** A human-readable diff of two player views (empty when equal). */
export function diffViews(a: PlayerView, b: PlayerView): string[] {
  const out: string[] = [];
  if (a.cursor !== b.cursor) out.push(`cursor ${a.cursor} ≠ ${b.cursor}`);
  if (a.clock !== b.clock) out.push(`clock "${a.clock}" ≠ "${b.clock}"`);
  if (a.edges.join() !== b.edges.join()) out.push(`wait-for edges [${a.edges}] ≠ [${b.edges}]`);
  const names = new Set([...a.panes, ...b.panes].map((p) => p.session));
  for (const n of names) {
    const pa = a.panes.find((p) => p.session === n);
    const pb = b.panes.find((p) => p.session === n);
    if (!pa || !pb) {
      out.push(`session ${n} present in only one view`);
      continue;
    }
    if (pa.state !== pb.state) out.push(`session ${n} state ${pa.state} ≠ ${pb.state}`);
    if (pa.ids !== pb.ids) out.push(`session ${n} ids "${pa.ids}" ≠ "${pb.ids}"`);
    if (norm(pa.output) !== norm(pb.output)) out.push(`session ${n} output "${norm(pa.output)}" ≠ "${norm(pb.output)}"`);
  }
  return out;
}
