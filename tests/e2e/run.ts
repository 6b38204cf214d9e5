/**
 * Real-browser end-to-end suite: `npm run test:e2e` (= `vite build && node --import tsx tests/e2e/run.ts`).
 *
 * Serves the production build with Vite's preview server on a free port, drives headless Chromium
 * (playwright-core) through the flows in ./flows/ (every module there exporting `FLOWS`), one fresh browser context per flow, and saves
 * screenshots to test-results/e2e/. Prints one line per flow and then `N passed, N failed`;
 * exits 1 when any flow failed. Options: `--only <name>[,<name>…]` runs a subset.
 * See docs/e2e.md.
 */
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { PreviewServer } from 'vite';
import type { Browser } from 'playwright-core';
import { CHROMIUM, ROOT, launchChromium, previewDist } from './browser';
import type { Flow } from './flow';
import { FlowContext } from './harness';

const DIST = join(ROOT, 'dist');
const OUT = join(ROOT, 'test-results', 'e2e');
const FLOW_TIMEOUT_MS = 120_000;

/** Every flow of every module in ./flows/, in file-name order; a module exports `FLOWS: Flow[]`. */
async function loadFlows(): Promise<Flow[]> {
  const dir = join(ROOT, 'tests', 'e2e', 'flows');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .sort();
  const all: Flow[] = [];
  for (const f of files) {
    const mod = (await import(pathToFileURL(join(dir, f)).href)) as { FLOWS?: Flow[] };
    if (!Array.isArray(mod.FLOWS)) throw new Error(`tests/e2e/flows/${f} does not export FLOWS`);
    all.push(...mod.FLOWS);
  }
  const seen = new Set<string>();
  for (const flow of all) {
    if (seen.has(flow.name)) throw new Error(`two e2e flows are named ${flow.name}`);
    seen.add(flow.name);
  }
  return all;
}

function parseOnly(argv: string[]): Set<string> | null {
  const i = argv.indexOf('--only');
  if (i < 0 || !argv[i + 1]) return null;
  return new Set(
    argv[i + 1]
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000} s`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

async function main(): Promise<number> {
  if (!existsSync(join(DIST, 'index.html'))) {
    console.error(`No build in ${DIST}: run \`npm run test:e2e\` (it builds first) or \`npx vite build\`.`);
    return 1;
  }
  if (!existsSync(CHROMIUM)) {
    console.error(`Chromium not found at ${CHROMIUM}: apt-get update && apt-get install -y chromium (or set CHROMIUM_PATH).`);
    return 1;
  }
  const FLOWS = await loadFlows();
  const only = parseOnly(process.argv.slice(2));
  const flows = only ? FLOWS.filter((f) => only.has(f.name)) : FLOWS;
  if (only && flows.length !== only.size) {
    console.error(`Unknown flow in --only; known: ${FLOWS.map((f) => f.name).join(', ')}`);
    return 1;
  }
  // A full run starts from an empty directory; --only keeps the other flows' screenshots.
  if (!only) rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });

  let server: PreviewServer | null = null;
  let baseUrl: string;
  let browser: Browser | null = null;
  const stop = async () => {
    await browser?.close().catch(() => undefined);
    browser = null;
    if (server) {
      const s = server;
      server = null;
      await s.close().catch(() => undefined);
    }
  };
  const onSignal = (sig: NodeJS.Signals) => {
    void stop().finally(() => process.exit(sig === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  let passed = 0;
  let failed = 0;
  const suiteStart = Date.now();
  try {
    ({ server, baseUrl } = await previewDist());

    browser = await launchChromium();
    console.log(`e2e: ${flows.length} flows against ${baseUrl} (Chromium ${browser.version()})`);

    for (const flow of flows) {
      const t0 = Date.now();
      const context = await browser.newContext({ viewport: flow.viewport ?? { width: 1440, height: 1000 }, locale: 'en-US' });
      const ctx = await FlowContext.create(context, baseUrl, OUT, flow.name);
      let error: unknown = null;
      try {
        await withTimeout(flow.run(ctx), flow.timeoutMs ?? FLOW_TIMEOUT_MS, `flow ${flow.name}`);
        ctx.assertNoConsoleErrors();
      } catch (e) {
        error = e;
        await ctx.failureShot();
      } finally {
        await context.close().catch(() => undefined);
      }
      const secs = ((Date.now() - t0) / 1000).toFixed(1);
      if (error === null) {
        passed++;
        console.log(`PASS  ${flow.name.padEnd(24)} ${secs.padStart(5)} s  ${flow.title}`);
      } else {
        failed++;
        const msg = error instanceof Error ? error.message : String(error);
        console.log(`FAIL  ${flow.name.padEnd(24)} ${secs.padStart(5)} s  ${flow.title}\n      ${msg.split('\n').join('\n      ')}`);
      }
    }
  } catch (e) {
    console.error(`e2e setup failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    failed += flows.length - passed - failed;
  } finally {
    await stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  console.log(`e2e: ${((Date.now() - suiteStart) / 1000).toFixed(1)} s total; screenshots in ${OUT}`);
  console.log(`${passed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e);
    console.log('0 passed, 1 failed');
    process.exit(1);
  },
);
