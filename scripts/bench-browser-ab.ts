/**
 * Two builds of the app side by side in one Chromium (the machine's load then hits both alike):
 * `tsx scripts/bench-browser-ab.ts <distA> <distB> [rounds]` serves both directories and the bare
 * page, and per round measures twice, alternating A, B, A, B, a cold start and a repeat visit
 * with a bare boot after each (as `npm run bench` does), then every step of every lesson of each.
 * Prints per build the medians of the runs and the ratio to the bare boots taken beside it (JSON).
 * `--steps-only`: no cold starts, only every step of every lesson, A, B per round.
 * `--cold-only`: only the cold starts, repeat visits and bare boots.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { preview, type PreviewServer } from 'vite';
import { ROOT, launchChromium } from '../tests/e2e/browser';
import { bareBoot, coldStart, previewBare, quantile, stepLatencies } from './bench-browser';

const args = process.argv.slice(2).filter((x) => !x.startsWith('--'));
const stepsOnly = process.argv.includes('--steps-only');
const coldOnly = process.argv.includes('--cold-only');
const [a, b] = [args[0], args[1]].map((d) => resolve(d ?? ''));
const rounds = Number(args[2] ?? 2);

async function serve(outDir: string): Promise<{ server: PreviewServer; url: string }> {
  const server = await preview({
    root: ROOT,
    configFile: resolve(ROOT, 'vite.config.ts'),
    logLevel: 'silent',
    build: { outDir },
    preview: { host: '127.0.0.1', port: 0, strictPort: false, open: false },
  });
  return { server, url: server.resolvedUrls!.local[0] };
}

interface Runs {
  cold: number[];
  list: number[];
  repeat: number[];
  bare: number[];
  stepMedian: number[];
  stepP95: number[];
  frameMedian: number[];
  frameP95: number[];
  stepMax: number[];
}
const empty = (): Runs => ({
  cold: [],
  list: [],
  repeat: [],
  bare: [],
  stepMedian: [],
  stepP95: [],
  frameMedian: [],
  frameP95: [],
  stepMax: [],
});

const servers = [await serve(a), await serve(b)];
const bare = await previewBare();
const browser = await launchChromium();
const runs = [empty(), empty()];
try {
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < (stepsOnly ? 0 : 2); k++) {
      for (let i = 0; i < 2; i++) {
        const c = await coldStart(browser, servers[i].url);
        runs[i].list.push(c.cold[0]);
        runs[i].cold.push(c.cold[1]);
        runs[i].repeat.push(c.repeat);
        runs[i].bare.push(await bareBoot(browser, bare.url));
      }
    }
    for (let i = 0; i < (coldOnly ? 0 : 2); i++) {
      const s = await stepLatencies(browser, servers[i].url);
      runs[i].stepMedian.push(quantile(s.ms, 0.5));
      runs[i].stepP95.push(quantile(s.ms, 0.95));
      runs[i].frameMedian.push(quantile(s.frameMs, 0.5));
      runs[i].frameP95.push(quantile(s.frameMs, 0.95));
      runs[i].stepMax.push(Math.max(...s.ms));
      console.error(
        `round ${r + 1} ${i ? 'B' : 'A'}: ${s.ms.length} steps, median ${quantile(s.ms, 0.5).toFixed(1)}, p95 ${quantile(s.ms, 0.95).toFixed(1)}, frame median ${quantile(s.frameMs, 0.5).toFixed(1)}, p95 ${quantile(s.frameMs, 0.95).toFixed(1)} (load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]})`,
      );
    }
  }
} finally {
  await browser.close();
  for (const s of [...servers, bare]) await s.server.close();
}
const med = (xs: number[]) => Math.round(quantile(xs, 0.5) * 10) / 10;
const summary = (x: Runs, dir: string) => ({
  dir,
  coldStartMs: med(x.cold),
  bareBootMs: med(x.bare),
  coldStartOverBareBoot: Math.round((quantile(x.cold, 0.5) / quantile(x.bare, 0.5)) * 100) / 100,
  repeatVisitMs: med(x.repeat),
  listVisibleMs: med(x.list),
  stepMedianMs: med(x.stepMedian),
  stepP95Ms: med(x.stepP95),
  stepFrameMedianMs: med(x.frameMedian),
  stepFrameP95Ms: med(x.frameP95),
  runs: Object.fromEntries(Object.entries(x).map(([k, v]) => [k, (v as number[]).map((n: number) => Math.round(n * 10) / 10)])),
});
console.log(JSON.stringify({ A: summary(runs[0], a), B: summary(runs[1], b) }, null, 2));
