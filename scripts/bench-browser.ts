/**
 * The browser half of `npm run bench`: the production build (`vite build`, served by Vite's
 * preview server) in headless Chromium (playwright-core, /usr/bin/chromium or CHROMIUM_PATH).
 *  - browserColdStartMs: a fresh browser context (no cache, no storage) opens `#/`; time from
 *    navigation start until the lesson list is visible AND, after opening the first lesson from
 *    it, its first step can run (step-next enabled, session panes drawn, player not busy). The
 *    lesson is opened the moment the list shows, so this is the time a learner waits, not
 *    counting their own click. Median of COLD_RUNS; browserListVisibleMs is the first half.
 *  - browserStepMedianMs / browserStepP95Ms: one step in the browser, from the click on "Next
 *    step" to the step counter's text changing in the DOM, timed inside the page with
 *    performance.now() and a MutationObserver, over every step of every lesson (warm engine).
 *    A predict checkpoint is skipped, and that step is timed from the click on "Skip".
 *    browserStepFrame{Median,P95}Ms: the same clicks until the frame that shows the change has
 *    been rendered (a task posted from the next requestAnimationFrame runs after its style,
 *    layout and paint), so layout the page does after the DOM update counts too.
 *  - jsGzipKB: every dist/**\/*.js gzipped (zlib level 9) and summed, i.e. everything JS the build
 *    ships, main thread and workers; PGlite's wasm/data and libpg-query's wasm excluded.
 */
import { writeFileSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build, preview, type PreviewServer } from 'vite';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM, ROOT, launchChromium, previewDist } from '../tests/e2e/browser';

const DIST = join(ROOT, 'dist');
const COLD_RUNS = 5;

export const BROWSER_TARGETS = {
  coldStartMs: 1500,
  coldStartOverBareBoot: 1.25,
  stepP95Ms: 16,
  jsGzipKB: 250,
  explore3x4Ms: 30_000,
} as const;

const BARE_SRC = join(ROOT, 'scripts', 'bare-boot');
const BARE_DIST = join(ROOT, 'node_modules', '.cache', 'lockstep-bare-boot');

/** Builds the bare page and serves it on its own port. */
export async function previewBare(): Promise<{ server: PreviewServer; url: string }> {
  const config = {
    root: BARE_SRC,
    base: './',
    configFile: false as const,
    logLevel: 'silent' as const,
    worker: { format: 'es' as const },
    build: { outDir: BARE_DIST, emptyOutDir: true, target: 'es2022' },
  };
  await build(config);
  const server = await preview({ ...config, preview: { host: '127.0.0.1', port: 0, strictPort: false, open: false } });
  const url = server.resolvedUrls?.local[0];
  if (!url) {
    await server.close();
    throw new Error('vite preview did not report a URL for the bare page');
  }
  return { server, url };
}

export interface BrowserFigures {
  chromium: string;
  browserColdStartMs: number;
  browserColdStartRunsMs: number[];
  browserBareBootMs: number;
  browserBareBootRunsMs: number[];
  browserColdStartOverBareBoot: number;
  browserRepeatVisitMs: number;
  browserExplore3x4Ms?: number;
  /** CPU time of Chromium's processes over the same span (see descendantsCpuMs). */
  browserExplore3x4CpuMs?: number;
  browserExplore3x4Runs?: { name: string; ms: number; cpuMs: number; ran: number; total: number }[];
  browserListVisibleMs: number;
  browserSteps: number;
  browserStepMedianMs: number;
  browserStepP95Ms: number;
  browserStepMaxMs: number;
  browserStepFrameMedianMs: number;
  browserStepFrameP95Ms: number;
  jsGzipKB: number;
  jsFiles: { file: string; gzipKB: number }[];
}

/** The q-quantile of xs (linear interpolation between closest ranks). */
export function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  return s[lo] + (s[Math.min(lo + 1, s.length - 1)] - s[lo]) * (pos - lo);
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

/** Sum of every dist/**\/*.js, gzipped. */
export function jsGzip(dist = DIST): { totalKB: number; files: { file: string; gzipKB: number }[] } {
  const files = walk(dist)
    .filter((f) => f.endsWith('.js'))
    .map((f) => ({ file: relative(dist, f), gzipKB: gzipSync(readFileSync(f), { level: 9 }).length / 1024 }))
    .sort((a, b) => b.gzipKB - a.gzipKB);
  return { totalKB: files.reduce((a, f) => a + f.gzipKB, 0), files };
}

/**
 * From navigation start: [list visible, first lesson's first step runnable], in ms (in-page
 * clock), in a fresh context; then the same again in a new tab of that context (a repeat visit:
 * the HTTP cache holds what the first visit fetched).
 */
export async function coldStart(browser: Browser, baseUrl: string): Promise<{ cold: [number, number]; repeat: number }> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 1000 }, locale: 'en-US' });
  try {
    const cold = await visit(await context.newPage(), baseUrl);
    const again = await context.newPage();
    const repeat = await visit(again, baseUrl);
    return { cold, repeat: repeat[1] };
  } finally {
    await context.close();
  }
}

/** The bare page (scripts/bare-boot): ms from navigation start until its Worker's PGlite answered, fresh context. */
export async function bareBoot(browser: Browser, bareUrl: string): Promise<number> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 1000 }, locale: 'en-US' });
  try {
    const page = await context.newPage();
    await page.goto(bareUrl, { waitUntil: 'commit' });
    const ms = (await (
      await page.waitForFunction(
        () => {
          const el = document.getElementById('state');
          if (el?.textContent?.startsWith('failed')) throw new Error(el.textContent);
          return el?.dataset.readyMs ? Number(el.dataset.readyMs) : 0;
        },
        undefined,
        { polling: 'raf', timeout: 60_000 },
      )
    ).jsonValue()) as number;
    return ms;
  } finally {
    await context.close();
  }
}

/** One visit of `#/` and the first lesson: [list visible, first step runnable]. */
async function visit(page: Page, baseUrl: string): Promise<[number, number]> {
  {
    await page.goto(`${baseUrl}#/`, { waitUntil: 'commit' });
    const listMs = (await (
      await page.waitForFunction(
        () => {
          const row = document.querySelector('[data-testid="lesson-row"] a') as HTMLElement | null;
          return row && row.offsetParent !== null ? performance.now() : 0;
        },
        undefined,
        { polling: 'raf', timeout: 60_000 },
      )
    ).jsonValue()) as number;
    await page.locator('[data-testid="lesson-row"] a').first().click();
    const readyMs = (await (
      await page.waitForFunction(
        () => {
          const next = document.querySelector('[data-testid="step-next"]') as HTMLButtonElement | null;
          const ready =
            next && !next.disabled && document.querySelector('[data-testid="session-pane"]') && !document.querySelector('.player .busy');
          return ready ? performance.now() : 0;
        },
        undefined,
        { polling: 'raf', timeout: 60_000 },
      )
    ).jsonValue()) as number;
    return [listMs, readyMs];
  }
}

/**
 * Clicks a button inside the page and resolves with the ms until the step counter's text
 * changes, or `{ asked: true }` when a predict question appears instead.
 */
function timedClick(page: Page, testid: string): Promise<{ ms: number; frameMs: number } | { asked: true }> {
  return page.evaluate((id) => {
    return new Promise<{ ms: number; frameMs: number } | { asked: true }>((resolve, reject) => {
      const pos = document.querySelector('[data-testid="step-position"]');
      const btn = document.querySelector(`[data-testid="${id}"]`) as HTMLButtonElement | null;
      if (!pos || !btn) return reject(new Error(`no step counter or ${id}`));
      const before = pos.textContent;
      let t0 = 0;
      const timer = setTimeout(() => (obs.disconnect(), reject(new Error('the step counter did not change within 20 s'))), 20_000);
      const obs = new MutationObserver(() => {
        if (pos.textContent !== before) {
          const ms = performance.now() - t0;
          obs.disconnect();
          clearTimeout(timer);
          // The frame after the change: its rendering follows the animation-frame callbacks, and a posted task runs after it.
          requestAnimationFrame(() => {
            const ch = new MessageChannel();
            ch.port1.onmessage = () => resolve({ ms, frameMs: performance.now() - t0 });
            ch.port2.postMessage(0);
          });
        } else if (document.querySelector('[data-testid="predict"]')) {
          obs.disconnect();
          clearTimeout(timer);
          resolve({ asked: true });
        }
      });
      obs.observe(document.body, { subtree: true, childList: true, characterData: true });
      t0 = performance.now();
      btn.click();
    });
  }, testid);
}

/** Steps through every lesson with Next; returns each step's click → counter-change time and click → frame rendered. */
export async function stepLatencies(browser: Browser, baseUrl: string): Promise<{ ms: number[]; frameMs: number[] }> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 1000 }, locale: 'en-US' });
  const ms: number[] = [];
  const frameMs: number[] = [];
  try {
    const page = await context.newPage();
    await page.goto(`${baseUrl}#/`);
    await page.locator('[data-testid="lesson-row"]').first().waitFor();
    const ids = await page.locator('[data-testid="lesson-row"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-lesson') ?? ''));
    for (const id of ids) {
      await page.goto(`${baseUrl}#/lessons/${id}/step/0`);
      await page.waitForFunction(
        (lesson) =>
          location.hash === `#/lessons/${lesson}/step/0` &&
          !!document.querySelector('[data-testid="session-pane"]') &&
          !document.querySelector('.player .busy') &&
          /^\D*0\D/.test(document.querySelector('[data-testid="step-position"]')?.textContent ?? ''),
        id,
        { timeout: 60_000 },
      );
      for (;;) {
        const next = page.getByTestId('step-next');
        if (await next.isDisabled()) break;
        // Wait for the previous step's render to settle, as a learner would between clicks.
        await page.waitForFunction(() => !document.querySelector('.player .busy'));
        let r = await timedClick(page, 'step-next');
        if ('asked' in r) r = await timedClick(page, 'predict-skip');
        if ('asked' in r) throw new Error(`${id}: a predict question came back after skipping`);
        ms.push(r.ms);
        frameMs.push(r.frameMs);
        await page.waitForFunction(() => !document.querySelector('.player .busy'));
      }
    }
  } finally {
    await context.close();
  }
  return { ms, frameMs };
}

/**
 * CPU time (user + system, ms) of every live process descending from this one (Chromium's
 * browser, renderer and helper processes), read from /proc: a figure the machine's load does not
 * inflate the way it inflates wall time. 0 where /proc is unavailable.
 */
export function descendantsCpuMs(): number {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return 0;
  }
  const parent = new Map<number, number>();
  const ticks = new Map<number, number>();
  for (const d of entries) {
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      // Fields after the parenthesized command: state ppid … utime(14) stime(15).
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(d), Number(f[1]));
      ticks.set(Number(d), Number(f[11]) + Number(f[12]));
    } catch {
      /* the process ended meanwhile */
    }
  }
  const mine = (pid: number): boolean => {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) if (p === process.pid) return true;
    return false;
  };
  let sum = 0;
  for (const [pid, t] of ticks) if (mine(pid)) sum += t;
  return sum * 10; // USER_HZ is 100 on Linux
}

/** The explorer's 3×4 scenarios (tests/explore/), as the bench's Node half runs them. */
const EXPLORE_3X4 = ['transfer-3x4-unordered', 'transfer-3x4-ordered'] as const;

/**
 * The lab's explorer in Chromium: each 3×4 scenario imported into #/lab, the cap set to every
 * interleaving, from the click on Explore until the summary says finished. Returns the ms of
 * both together and, per scenario, ms, interleavings run and covered.
 */
async function labExplore(
  browser: Browser,
  baseUrl: string,
): Promise<{ ms: number; cpuMs: number; runs: { name: string; ms: number; cpuMs: number; ran: number; total: number }[] }> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 1000 }, locale: 'en-US' });
  const runs: { name: string; ms: number; cpuMs: number; ran: number; total: number }[] = [];
  try {
    const page = await context.newPage();
    await page.goto(`${baseUrl}#/lab`);
    await page.getByTestId('lab-editor').waitFor({ timeout: 60_000 });
    for (const name of EXPLORE_3X4) {
      const text = readFileSync(join(ROOT, 'tests', 'explore', `${name}.spec`), 'utf8');
      await page.getByTestId('lab-import').setInputFiles({ name: `${name}.spec`, mimeType: 'text/plain', buffer: Buffer.from(text) });
      await page.getByTestId('lab-message').waitFor({ timeout: 30_000 });
      await page.getByTestId('lab-explore-cap').fill('34650');
      const summary = page.getByTestId('interleavings-summary');
      const t0 = performance.now();
      const cpu0 = descendantsCpuMs();
      await page.getByTestId('lab-explore').click();
      await page.waitForFunction(
        () => document.querySelector('[data-testid="interleavings-summary"]')?.getAttribute('data-state') === 'finished',
        undefined,
        { timeout: 900_000, polling: 100 },
      );
      const ms = performance.now() - t0;
      const cpuMs = descendantsCpuMs() - cpu0;
      const total = Number(await summary.getAttribute('data-total'));
      const ran = Number((await summary.getAttribute('data-ran')) ?? total);
      runs.push({ name, ms, cpuMs, ran, total });
    }
  } finally {
    await context.close();
  }
  return { ms: runs.reduce((a, r) => a + r.ms, 0), cpuMs: runs.reduce((a, r) => a + r.cpuMs, 0), runs };
}

/** Builds the app, serves it, measures. Throws when Chromium is missing. */
export async function browserBench(opts: { rebuild?: boolean; explore?: boolean; exploreOnly?: boolean } = {}): Promise<BrowserFigures> {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM} (set CHROMIUM_PATH)`);
  if (opts.rebuild !== false || !existsSync(join(DIST, 'index.html'))) {
    // The app imports the prebuilt data directory (what `npm run build` makes in prebuild).
    if (!existsSync(join(ROOT, 'src/worker/pgdata.tgz'))) {
      const { PgliteExecutor } = await import('../src/engine/pg/executor');
      const dump = await PgliteExecutor.dumpFresh();
      writeFileSync(join(ROOT, 'src/worker/pgdata.tgz'), Buffer.from(await dump.arrayBuffer()));
    }
    await build({ root: ROOT, configFile: join(ROOT, 'vite.config.ts'), logLevel: 'silent' });
  }
  const js = jsGzip();
  let server: PreviewServer | null = null;
  let bare: { server: PreviewServer; url: string } | null = null;
  let baseUrl: string;
  let browser: Browser | null = null;
  try {
    ({ server, baseUrl } = await previewDist());
    bare = await previewBare();
    browser = await launchChromium();
    if (opts.exploreOnly) {
      const only = await labExplore(browser, baseUrl);
      return {
        chromium: browser.version(),
        browserExplore3x4Ms: only.ms,
        browserExplore3x4CpuMs: only.cpuMs,
        browserExplore3x4Runs: only.runs,
      } as BrowserFigures;
    }
    const cold: [number, number][] = [];
    const repeat: number[] = [];
    const bareMs: number[] = [];
    // Alternating, so a change in the machine's load hits both figures alike.
    for (let i = 0; i < COLD_RUNS; i++) {
      const c = await coldStart(browser, baseUrl);
      cold.push(c.cold);
      repeat.push(c.repeat);
      bareMs.push(await bareBoot(browser, bare.url));
    }
    const { ms: steps, frameMs } = await stepLatencies(browser, baseUrl);
    const explore = opts.explore === false ? null : await labExplore(browser, baseUrl);
    return {
      chromium: browser.version(),
      browserColdStartMs: quantile(
        cold.map((c) => c[1]),
        0.5,
      ),
      browserColdStartRunsMs: cold.map((c) => Math.round(c[1])),
      browserBareBootMs: quantile(bareMs, 0.5),
      browserBareBootRunsMs: bareMs.map(Math.round),
      browserColdStartOverBareBoot:
        quantile(
          cold.map((c) => c[1]),
          0.5,
        ) / quantile(bareMs, 0.5),
      browserRepeatVisitMs: quantile(repeat, 0.5),
      browserListVisibleMs: quantile(
        cold.map((c) => c[0]),
        0.5,
      ),
      browserSteps: steps.length,
      browserStepMedianMs: quantile(steps, 0.5),
      browserStepP95Ms: quantile(steps, 0.95),
      browserStepMaxMs: Math.max(...steps),
      browserStepFrameMedianMs: quantile(frameMs, 0.5),
      browserStepFrameP95Ms: quantile(frameMs, 0.95),
      jsGzipKB: js.totalKB,
      jsFiles: js.files,
      ...(explore ? { browserExplore3x4Ms: explore.ms, browserExplore3x4CpuMs: explore.cpuMs, browserExplore3x4Runs: explore.runs } : {}),
    };
  } finally {
    await browser?.close().catch(() => undefined);
    await server?.close().catch(() => undefined);
    await bare?.server.close().catch(() => undefined);
  }
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const r = await browserBench({ rebuild: !process.argv.includes('--no-build') });
  console.log(JSON.stringify(r, null, 2));
}
