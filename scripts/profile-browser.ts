/**
 * Where the browser's time goes (a diagnostic, not a benchmark): serves a built app directory
 * (default dist/) and in headless Chromium
 *  - opens `#/` in a fresh context and lists every request of the page and its workers with
 *    its start and end (ms from navigation), and the moment the first step is runnable;
 *  - steps through lessons with a main-thread CPU profile (Chrome DevTools protocol) and, per
 *    step, splits click → DOM change into "until the Worker's answer arrived" (engine step,
 *    structured clone) and "after" (main thread: Svelte, D3), printing medians and the
 *    heaviest functions by self time.
 * Usage: tsx scripts/profile-browser.ts [distDir] [lesson ids…]
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { sourceMapper, topLines, type CpuProfile as Profile } from './cpuProfile';
import { preview } from 'vite';
import type { Page } from 'playwright-core';
import { ROOT, launchChromium } from '../tests/e2e/browser';
import { quantile } from './bench-browser';

const dist = resolve(process.argv[2] ?? 'dist');
const only = process.argv.slice(3);
const noProfile = !!process.env.NO_CPU_PROFILE;
/** A directory to write each timed step's own CPU profile to (then no whole-run profile). */
const perStep = process.env.PER_STEP_PROFILE;

/** Counts every message the page's engine Worker posts back, with its arrival time. */
const INSTRUMENT = () => {
  const w = window as unknown as { __arrivals: number[]; __posts: number[]; __handle: number[]; __bytes: number[] };
  w.__arrivals = [];
  w.__handle = [];
  w.__bytes = [];
  w.__posts = [];
  const RealWorker = window.Worker;
  window.Worker = class extends RealWorker {
    constructor(url: string | URL, opts?: WorkerOptions) {
      super(url, opts);
      this.addEventListener('message', (ev) => {
        w.__arrivals.push(performance.now());
        const t0 = performance.now();
        w.__bytes.push(JSON.stringify(ev.data).length);
        w.__handle.push((ev.data as { timing?: { handleMs?: number } }).timing?.handleMs ?? NaN);
        w.__arrivals[w.__arrivals.length - 1] += 0 * t0;
      });
    }
    override postMessage(m: unknown, t?: unknown): void {
      w.__posts.push(performance.now());
      super.postMessage(m, t as Transferable[]);
    }
  } as typeof Worker;
};

async function coldProfile(page: Page, base: string): Promise<void> {
  const reqs: { url: string; start: number; end: number; size: number }[] = [];
  const t0 = Date.now();
  page.context().on('requestfinished', (r) => {
    const tm = r.timing();
    void r.sizes().then((s) =>
      reqs.push({
        url: r.url().replace(base, ''),
        start: tm.startTime - t0,
        end: tm.startTime - t0 + tm.responseEnd,
        size: s.responseBodySize,
      }),
    );
  });
  await page.goto(`${base}#/`, { waitUntil: 'commit' });
  const list = await page.waitForFunction(() => {
    const row = document.querySelector('[data-testid="lesson-row"] a') as HTMLElement | null;
    return row && row.offsetParent !== null ? performance.now() : 0;
  });
  console.log('list visible', Math.round((await list.jsonValue()) as number));
  await page.locator('[data-testid="lesson-row"] a').first().click();
  const ready = await page.waitForFunction(
    () => {
      const next = document.querySelector('[data-testid="step-next"]') as HTMLButtonElement | null;
      return next && !next.disabled && document.querySelector('[data-testid="session-pane"]') && !document.querySelector('.player .busy')
        ? performance.now()
        : 0;
    },
    undefined,
    { polling: 'raf', timeout: 60_000 },
  );
  console.log('first step runnable', Math.round((await ready.jsonValue()) as number));
  const marks = await page.evaluate(() => ({
    posts: (window as unknown as { __posts: number[] }).__posts,
    arrivals: (window as unknown as { __arrivals: number[] }).__arrivals,
  }));
  console.log('posts', marks.posts.map(Math.round), 'arrivals', marks.arrivals.map(Math.round));
  await new Promise((r) => setTimeout(r, 500));
  for (const r of reqs.sort((a, b) => a.start - b.start))
    console.log(
      `${String(Math.round(r.start)).padStart(6)} → ${String(Math.round(r.end)).padStart(6)}  ${(r.size / 1024).toFixed(0).padStart(6)} KB  ${r.url.slice(0, 90)}`,
    );
}

async function stepProfile(page: Page, base: string, ids: string[]): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  const total: number[] = [];
  const worker: number[] = [];
  const after: number[] = [];
  const handle: number[] = [];
  const where: string[] = [];
  const frame: number[] = [];
  const bytes: number[] = [];
  const metricNames = ['ScriptDuration', 'LayoutDuration', 'RecalcStyleDuration', 'TaskDuration'] as const;
  const metricParts: Record<(typeof metricNames)[number], number[]> = {
    ScriptDuration: [],
    LayoutDuration: [],
    RecalcStyleDuration: [],
    TaskDuration: [],
  };
  await cdp.send('Performance.enable');
  const metrics = async () => {
    const m = (await cdp.send('Performance.getMetrics')) as { metrics: { name: string; value: number }[] };
    return Object.fromEntries(m.metrics.map((x) => [x.name, x.value * 1000]));
  };
  let profiling = false;
  for (const id of ids) {
    await page.goto(`${base}#/lessons/${id}/step/0`);
    await page.waitForFunction(
      (lesson) =>
        location.hash === `#/lessons/${lesson}/step/0` &&
        !!document.querySelector('[data-testid="session-pane"]') &&
        !document.querySelector('.player .busy'),
      id,
      { timeout: 60_000 },
    );
    if (!profiling && !noProfile && !perStep) {
      await cdp.send('Profiler.start');
      profiling = true;
    }
    for (;;) {
      if (await page.getByTestId('step-next').isDisabled()) break;
      await page.waitForFunction(() => !document.querySelector('.player .busy'));
      const m0 = await metrics();
      if (perStep) await cdp.send('Profiler.start');
      const r = await page.evaluate(() => {
        return new Promise<{ ms: number; frameMs: number; answerMs: number; handleMs: number; bytes: number } | null>((res) => {
          const w = window as unknown as { __arrivals: number[]; __handle: number[]; __bytes: number[] };
          const pos = document.querySelector('[data-testid="step-position"]')!;
          const before = pos.textContent;
          const n = w.__arrivals.length;
          const obs = new MutationObserver(() => {
            if (document.querySelector('[data-testid="predict"]')) {
              obs.disconnect();
              return res(null);
            }
            if (pos.textContent !== before) {
              const ms = performance.now() - t0;
              obs.disconnect();
              requestAnimationFrame(() => {
                const ch = new MessageChannel();
                ch.port1.onmessage = () =>
                  res({
                    ms,
                    frameMs: performance.now() - t0,
                    answerMs: (w.__arrivals[n] ?? NaN) - t0,
                    handleMs: w.__handle[n] ?? NaN,
                    bytes: w.__bytes[n] ?? NaN,
                  });
                ch.port2.postMessage(0);
              });
            }
          });
          obs.observe(document.body, { subtree: true, childList: true, characterData: true });
          const t0 = performance.now();
          (document.querySelector('[data-testid="step-next"]') as HTMLButtonElement).click();
        });
      });
      if (!r) {
        await page.getByTestId('predict-skip').click();
        await page.waitForFunction(() => !document.querySelector('.player .busy'));
        continue;
      }
      const m1 = await metrics();
      if (perStep) {
        const { profile: p } = (await cdp.send('Profiler.stop')) as { profile: Profile };
        writeFileSync(
          join(perStep, `step-${total.length}.json`),
          JSON.stringify({ where: `${id}#${total.length}`, after: r.ms - r.answerMs, total: r.ms, profile: p }),
        );
      }
      for (const k of metricNames) metricParts[k].push(m1[k] - m0[k]);
      total.push(r.ms);
      where.push(`${id}#${total.length} (${((await page.getByTestId('step-position').textContent()) ?? '').trim()})`);
      worker.push(r.answerMs);
      after.push(r.ms - r.answerMs);
      handle.push(r.handleMs);
      frame.push(r.frameMs);
      bytes.push(r.bytes);
      await page.waitForFunction(() => !document.querySelector('.player .busy'));
    }
  }
  const profile = profiling ? ((await cdp.send('Profiler.stop')) as { profile: Profile }).profile : null;
  const q = (xs: number[]) =>
    `median ${quantile(xs, 0.5).toFixed(1)} p95 ${quantile(xs, 0.95).toFixed(1)} max ${Math.max(...xs).toFixed(1)}`;
  console.log(`${total.length} steps`);
  console.log('click → DOM change      ', q(total));
  console.log('click → worker answer   ', q(worker));
  console.log('answer → DOM change     ', q(after));
  console.log('worker handleMs         ', q(handle));
  console.log('click → frame rendered  ', q(frame));
  console.log('answer JSON chars       ', q(bytes));
  console.log('main thread, click → frame (+ the page.evaluate round trips), CDP Performance metrics:');
  for (const k of metricNames) console.log(`  ${k.padEnd(22)}`, q(metricParts[k]));
  const order = total.map((_, i) => i).sort((x, y) => total[y] - total[x]);
  for (const i of order.slice(0, Number(process.env.SLOW ?? 8)))
    console.log(
      `slow: ${where[i]} total ${total[i].toFixed(1)} answer ${worker[i].toFixed(1)} (worker ${handle[i].toFixed(1)}) after ${after[i].toFixed(1)}`,
    );
  if (profile && process.env.PROFILE_OUT) writeFileSync(process.env.PROFILE_OUT, JSON.stringify(profile));
  if (profile) selfTimes(profile);
}

/** Prints the functions with the most self time, and time by script. */
function selfTimes(p: Profile): void {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const original = sourceMapper(dist);
  const self = new Map<string, number>();
  const byUrl = new Map<string, number>();
  p.samples.forEach((id, i) => {
    const n = byId.get(id)!;
    const f = n.callFrame;
    const o = original(f);
    const key = o ? `${o.name} ${o.file}` : `${f.functionName || '(anon)'} ${f.url.split('/').pop()}:${f.lineNumber}`;
    const dt = (p.timeDeltas[i] ?? 0) / 1000;
    self.set(key, (self.get(key) ?? 0) + dt);
    const u = o?.file ?? (f.url.split('/').pop() || f.functionName);
    byUrl.set(u, (byUrl.get(u) ?? 0) + dt);
  });
  console.log('by script:\n' + topLines(byUrl, 30));
  console.log('by function (self):\n' + topLines(self, 40));
}

const server = await preview({
  root: ROOT,
  configFile: resolve(ROOT, 'vite.config.ts'),
  logLevel: 'silent',
  build: { outDir: dist },
  preview: { host: '127.0.0.1', port: 0, strictPort: false, open: false },
});
const base = server.resolvedUrls!.local[0];
const browser = await launchChromium();
try {
  const ctx = await browser.newContext({ viewport: { width: 1440, height: 1000 }, locale: 'en-US', serviceWorkers: 'block' });
  await ctx.addInitScript(INSTRUMENT);
  const page = await ctx.newPage();
  await coldProfile(page, base);
  // The cold profile left the first lesson open: the list is on #/.
  await page.goto(`${base}#/`);
  await page.locator('[data-testid="lesson-row"]').first().waitFor();
  const ids = only.length
    ? only
    : await page.locator('[data-testid="lesson-row"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-lesson') ?? ''));
  await stepProfile(page, base, ids);
} finally {
  await browser.close();
  await server.close();
}
