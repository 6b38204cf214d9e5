/**
 * What a cold start costs in CPU, beside its wall time: `tsx scripts/cold-cpu.ts <dist>… [rounds]`
 * serves each build (and the bench's bare page) and, per round and build in turn, opens `#/` in a
 * fresh context, opens the first lesson as soon as the list shows (as `npm run bench` does) and
 * sums the CPU time of every Chromium process (user + system, from /proc) from navigation until
 * the first step is runnable. On a machine whose two cores are shared with other work the wall
 * time mostly measures the load; the CPU a build spends does not, so two builds compare on it.
 * Linux only. Prints per build the median CPU and wall ms and every run.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { preview } from 'vite';
import type { Page } from 'playwright-core';
import { ROOT, launchChromium } from '../tests/e2e/browser';
import { previewBare } from './bench-browser';

const args = process.argv.slice(2);
const rounds = Number(args.find((a) => /^\d+$/.test(a)) ?? 3);
const dists = args.filter((a) => !/^\d+$/.test(a)).map((d) => resolve(d));
const TICK_MS = 10; // USER_HZ is 100 on Linux

/** User + system CPU ms of every live Chromium process. */
function chromiumCpuMs(): number {
  let sum = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('chromium')) continue;
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      sum += (Number(f[11]) + Number(f[12])) * TICK_MS;
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return sum;
}

async function firstStepRunnable(page: Page, url: string): Promise<number> {
  await page.goto(`${url}#/`, { waitUntil: 'commit' });
  await page.waitForFunction(
    () => (document.querySelector('[data-testid="lesson-row"] a') as HTMLElement | null)?.offsetParent,
    undefined,
    {
      polling: 'raf',
    },
  );
  await page.locator('[data-testid="lesson-row"] a').first().click();
  const ready = () => {
    const next = document.querySelector('[data-testid="step-next"]') as HTMLButtonElement | null;
    return next && !next.disabled && document.querySelector('[data-testid="session-pane"]') && !document.querySelector('.player .busy')
      ? performance.now()
      : 0;
  };
  return (await (await page.waitForFunction(ready, undefined, { polling: 'raf', timeout: 60_000 })).jsonValue()) as number;
}

async function bareReady(page: Page, url: string): Promise<number> {
  await page.goto(url, { waitUntil: 'commit' });
  const ready = () => Number(document.getElementById('state')?.dataset.readyMs ?? 0);
  return (await (await page.waitForFunction(ready, undefined, { polling: 'raf', timeout: 60_000 })).jsonValue()) as number;
}

const targets: { name: string; url: string; bare: boolean }[] = [];
for (const d of dists) {
  const server = await preview({
    root: ROOT,
    configFile: resolve(ROOT, 'vite.config.ts'),
    logLevel: 'silent',
    build: { outDir: d },
    preview: { host: '127.0.0.1', port: 0, strictPort: false, open: false },
  });
  targets.push({ name: d, url: server.resolvedUrls!.local[0]!, bare: false });
}
targets.push({ name: 'bare page', url: (await previewBare()).url, bare: true });
const browser = await launchChromium();
const runs = new Map(targets.map((t) => [t.name, { cpu: [] as number[], wall: [] as number[] }]));
for (let r = 0; r < rounds; r++) {
  for (const t of targets) {
    const context = await browser.newContext({ viewport: { width: 1440, height: 1000 }, locale: 'en-US' });
    const page = await context.newPage();
    await page.goto('about:blank');
    const before = chromiumCpuMs();
    const wall = t.bare ? await bareReady(page, t.url) : await firstStepRunnable(page, t.url);
    runs.get(t.name)!.cpu.push(chromiumCpuMs() - before);
    runs.get(t.name)!.wall.push(Math.round(wall));
    await context.close();
  }
}
await browser.close();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [name, v] of runs)
  console.log(
    `${name}: CPU median ${median(v.cpu)} ms, wall median ${median(v.wall)} ms; CPU ${v.cpu.join(' ')}; wall ${v.wall.join(' ')}`,
  );
process.exit(0);
