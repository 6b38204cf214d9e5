/**
 * Offline and embedding (issue 14, parts 3 and 4): the service worker precaches the build so a
 * reload with the network off plays a lesson to its deadlock; a new build is announced by a toast
 * and applied only on Reload; the lab's iframe snippet, pasted into a page of another origin,
 * shows a compact player that steps inside the frame.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, appendFileSync, existsSync, statSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import type { FrameLocator, Page } from 'playwright-core';
import type { Flow } from '../flow';
import { assert, norm, waitFor, type FlowContext } from '../harness';
import { ROOT } from '../browser';
import { CONTENT_SECURITY_POLICY } from '../../../src/build/csp';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.webmanifest': 'application/manifest+json',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json',
};

/** A static file server on a free loopback port: `files` answers by path first, then `dir` (if any). */
async function serve(opts: { dir?: string; files?: Record<string, string>; headers?: Record<string, string> }): Promise<{
  server: Server;
  port: number;
  close: () => Promise<void>;
}> {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const page = opts.files?.[path];
    if (page !== undefined) {
      res.writeHead(200, { 'Content-Type': TYPES['.html'], 'Cache-Control': 'no-store' });
      res.end(page);
      return;
    }
    const file = opts.dir ? normalize(join(opts.dir, path === '/' ? 'index.html' : path)) : '';
    if (!opts.dir || !file.startsWith(opts.dir) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
      'Cache-Control': 'no-cache',
      ...opts.headers,
    });
    res.end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    server,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Waits until the page is controlled by an activated service worker (the precache is complete by then). */
async function waitForServiceWorker(page: Page): Promise<void> {
  await waitFor(
    () =>
      page.evaluate(async () => {
        const reg = await navigator.serviceWorker.getRegistration();
        return reg?.active?.state === 'activated' && navigator.serviceWorker.controller !== null;
      }),
    'the service worker never took control of the page',
    60_000,
    250,
  );
}

/** Steps the full player with Next until a pane shows SQLSTATE 40P01; returns the victim session. */
async function playToDeadlock(ctx: FlowContext): Promise<string> {
  for (;;) {
    const victim = await ctx.page
      .locator('[data-testid="session-pane"]:has([data-testid="pg-message"][data-sqlstate="40P01"])')
      .getAttribute('data-session', { timeout: 200 })
      .catch(() => null);
    if (victim) return victim;
    const [c, total] = await ctx.position();
    assert(c < total, 'classic-deadlock ended without a 40P01');
    await ctx.next();
  }
}

const offlineLesson: Flow = {
  name: 'offline-lesson',
  title:
    'service worker: after the first visit, the network off and a reload, classic-deadlock plays to its 40P01; lab, retry lab, challenges open',
  timeoutMs: 180_000,
  async run(ctx) {
    ctx.predictPolicy = 'skip';
    await ctx.page.goto(ctx.url('#/'));
    const manifest = await ctx.page.locator('link[rel="manifest"]').getAttribute('href');
    assert(manifest === './manifest.webmanifest', `index.html links no manifest (${manifest})`);
    await waitForServiceWorker(ctx.page);
    const cached = await ctx.page.evaluate(async () => {
      const names = await caches.keys();
      const urls: string[] = [];
      for (const n of names) for (const r of await (await caches.open(n)).keys()) urls.push(new URL(r.url).pathname);
      return urls;
    });
    for (const re of [
      /pglite-.*\.wasm$/,
      /pglite-.*\.data$/,
      /pgdata-.*\.tgz$/,
      /libpg-query-.*\.wasm$/,
      /\/index\.html$/,
      /Lab-.*\.js$/,
    ]) {
      assert(
        cached.some((u) => re.test(u)),
        `the precache has no ${re}: ${cached.length} entries`,
      );
    }

    await ctx.context.setOffline(true);
    const res = await ctx.page.reload();
    assert(res?.fromServiceWorker(), 'the offline reload was not answered by the service worker');
    const failed: string[] = [];
    ctx.page.on('requestfailed', (r) => failed.push(r.url()));
    await ctx.openLesson('classic-deadlock');
    const victim = await playToDeadlock(ctx);
    assert(victim === 'B', `offline, the deadlock victim is ${victim}, expected B (classic-deadlock.expected.txt)`);
    const edges = await ctx.page.locator('[data-testid="wfg-node"][data-victim="true"]').count();
    assert(edges === 1, `offline, ${edges} victim nodes in the graph`);
    await ctx.shot('deadlock');

    // The other routes' lazy chunks and workers come from the precache too.
    await ctx.page.goto(ctx.url('#/lab'));
    await waitFor(async () => (await ctx.byTestId('lab-blank').count()) > 0, 'offline, the lab does not load');
    await ctx.page.goto(ctx.url('#/retry'));
    await waitFor(
      async () => (await ctx.byTestId('nav-retry').getAttribute('aria-current')) === 'page',
      'offline, the retry lab does not open',
    );
    await ctx.page.goto(ctx.url('#/challenges'));
    await waitFor(
      async () => norm((await ctx.page.locator('main').textContent()) ?? '').length > 40,
      'offline, the challenges page stays empty',
    );
    assert(failed.length === 0, `requests failed offline: ${failed.join(', ')}`);
    await ctx.context.setOffline(false);
  },
};

const updateToast: Flow = {
  name: 'update-toast',
  title: 'a new build is announced by a toast and never applied mid-lesson; Reload activates it and returns to the same step',
  timeoutMs: 180_000,
  async run(ctx) {
    // A copy of the build on a server of its own: the flow changes its service worker, never dist/.
    const dir = mkdtempSync(join(tmpdir(), 'lockstep-update-'));
    cpSync(join(ROOT, 'dist'), dir, { recursive: true });
    const site = await serve({ dir, headers: { 'Content-Security-Policy': CONTENT_SECURITY_POLICY } });
    try {
      const base = `http://127.0.0.1:${site.port}/`;
      ctx.predictPolicy = 'skip';
      await ctx.page.goto(`${base}#/lessons/classic-deadlock/step/0`);
      await ctx.waitForCursor(0, 'classic-deadlock opens');
      await waitForServiceWorker(ctx.page);
      for (let i = 0; i < 3; i++) await ctx.next();
      assert((await ctx.byTestId('update-toast').count()) === 0, 'the update toast shows with no new version');

      // "Deploy" a new version: the service worker script changes by one byte-different line.
      appendFileSync(join(dir, 'sw.js'), `\n// next build ${Date.now()}\n`);
      await ctx.page.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.update());
      const toast = ctx.byTestId('update-toast');
      await waitFor(() => toast.isVisible(), 'no update toast after a new service worker was installed', 60_000);
      assert(/A new version is ready/.test(norm((await toast.textContent()) ?? '')), 'the toast does not say a new version is ready');
      // Announced, not forced: the lesson stays where it was, the new worker waits.
      const [c] = await ctx.position();
      assert(c === 3, `the lesson moved to step ${c} when the update arrived`);
      const waiting = await ctx.page.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.waiting?.state ?? null);
      assert(waiting === 'installed', `the new service worker is not waiting (${waiting})`);
      await ctx.shot('toast', true);

      await Promise.all([ctx.page.waitForEvent('load', { timeout: 30_000 }), ctx.byTestId('update-reload').click()]);
      await ctx.waitForCursor(3, 'after Reload, the lesson at the same step', 40_000);
      const after = await ctx.page.evaluate(async () => {
        const reg = await navigator.serviceWorker.getRegistration();
        return { waiting: reg?.waiting ?? null, controlled: navigator.serviceWorker.controller !== null };
      });
      assert(after.waiting === null && after.controlled, `after Reload: ${JSON.stringify(after)}`);
      assert((await ctx.byTestId('update-toast').count()) === 0, 'the toast is still shown after the reload');
    } finally {
      await site.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

/** The frame's step counter as [cursor, total]. */
async function framePosition(frame: FrameLocator): Promise<[number, number]> {
  const text = (await frame.getByTestId('step-position').textContent({ timeout: 5000 })) ?? '';
  const m = /(\d+)\D+(\d+)/.exec(text);
  assert(m, `embed step counter unreadable: "${text}"`);
  return [Number(m[1]), Number(m[2])];
}

/** Clicks the frame's Next and waits for the engine's answer. */
async function frameNext(frame: FrameLocator): Promise<number> {
  const [c, total] = await framePosition(frame);
  assert(c < total, `embed next: already at the end (${c} of ${total})`);
  await frame.getByTestId('step-next').click();
  await waitFor(
    async () => (await framePosition(frame))[0] === c + 1 && (await frame.locator('.embed .busy').count()) === 0,
    `embed: the player never settled at step ${c + 1}`,
    20_000,
  );
  return c + 1;
}

const embedFrame: Flow = {
  name: 'embed-frame',
  title:
    "the lab's iframe snippet on a page of another origin: a compact player (panes, graph, matrix cell) with no site chrome steps to the cycle and the 40P01; a lesson embed in Russian and dark",
  viewport: { width: 1440, height: 900 },
  timeoutMs: 180_000,
  async run(ctx) {
    // The snippet from the lab's share dialog, for the two-transfer template.
    await ctx.page.goto(ctx.url('#/lab'));
    await ctx.byTestId('lab-template').selectOption('transfer-unordered');
    await ctx.byTestId('lab-share').click();
    const snippet = await ctx.byTestId('share-embed').inputValue();
    await ctx.byTestId('share-embed').scrollIntoViewIfNeeded();
    await ctx.shot('share', true);
    assert(
      /^<iframe src="[^"]+#\/embed\/lab\?s=[\w-]+" width="800" height="500" title="[^"]+"/.test(snippet),
      `unexpected snippet: ${snippet}`,
    );

    const lessonEmbed = ctx.url('#/embed/lessons/classic-deadlock?lang=ru&theme=dark');
    const host = await serve({
      files: {
        '/': `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<link rel="icon" href="data:,"><title>A blog post</title><style>body{font:16px Georgia,serif;max-width:820px;margin:1rem auto;padding:0 8px}</style></head>
<body><h1>Why my transfers deadlock</h1><p>Two transfers, opposite order:</p>
${snippet}
<p>The end.</p></body></html>`,
        '/ru': `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<link rel="icon" href="data:,"><title>Статья</title><style>body{font:16px Georgia,serif;max-width:820px;margin:1rem auto;padding:0 8px;background:#222;color:#eee}</style></head>
<body><h1>Взаимоблокировка</h1>
<iframe src="${lessonEmbed}" width="800" height="500" title="Lockstep" style="border:0;max-width:100%"></iframe></body></html>`,
      },
    });
    try {
      // localhost vs 127.0.0.1: another origin and another site than the app.
      await ctx.page.goto(`http://localhost:${host.port}/`);
      const frame = ctx.page.frameLocator('iframe');
      const player = frame.getByTestId('embed-player');
      await waitFor(() => player.isVisible(), 'the embed player does not show in the frame', 40_000);
      await waitFor(async () => (await frame.getByTestId('session-pane').count()) === 2, 'the embed shows no session panes', 40_000);
      assert(!(await frame.locator('header.top').isVisible()), 'the embed shows the site header');
      assert(!(await frame.getByTestId('lang-switch').isVisible()), 'the embed shows the site preferences');
      const box = await ctx.page.locator('iframe').boundingBox();
      assert(box && Math.round(box.width) === 800 && Math.round(box.height) === 500, `the frame is ${box?.width}×${box?.height}`);

      // Step to the cycle: both sessions wait, the graph has a cycle, the stage's matrix cell is lit.
      let cycle = false;
      let victim: string | null = null;
      for (let i = 0; i < 20 && !victim; i++) {
        await frameNext(frame);
        if (!cycle && (await frame.locator('[data-testid="wfg-edge"][data-in-cycle="true"]').count()) === 2) {
          cycle = true;
          const lit = await frame.locator('[data-testid="stage-wait-cells"] [data-testid="matrix-cell"][data-conflict="true"]').count();
          assert(lit > 0, 'at the cycle, no matrix cell of the current waits is lit');
          await ctx.shot('lab-cycle', true);
        }
        victim = await frame
          .locator('.slot:has([data-testid="pg-message"][data-sqlstate="40P01"])')
          .getAttribute('data-session', { timeout: 200 })
          .catch(() => null);
      }
      assert(cycle, 'the embedded scenario never showed the two-edge cycle');
      await ctx.shot('lab-victim', true);
      assert(victim, 'the embedded scenario never reached a 40P01');
      // Previous undoes a step inside the frame.
      const [at] = await framePosition(frame);
      await frame.getByTestId('step-prev').click();
      await waitFor(async () => (await framePosition(frame))[0] === at - 1, 'embed: Previous does not step back');
      const full = await frame.getByTestId('embed-open-full').getAttribute('href');
      assert(full?.startsWith('./#/lab?s='), `the "open in Lockstep" link is ${full}`);

      // A lesson embed, in Russian and dark, at 1440 and 390 px.
      await ctx.page.goto(`http://localhost:${host.port}/ru`);
      const ru = ctx.page.frameLocator('iframe');
      await waitFor(async () => (await ru.getByTestId('session-pane').count()) === 2, 'the lesson embed shows no panes', 40_000);
      assert((await ru.locator('html').getAttribute('data-theme')) === 'dark', 'theme=dark is not applied in the embed');
      assert((await ru.locator('html').getAttribute('lang')) === 'ru', 'lang=ru is not applied in the embed');
      // Step 6 is B's 40P01 (classic-deadlock.expected.txt): the victim node is marked in the frame.
      for (let i = 0; i < 6; i++) await frameNext(ru);
      assert(
        /Шаг 6 из/.test(norm((await ru.getByTestId('step-position').textContent()) ?? '')),
        'the embed step counter is not in Russian',
      );
      const victims = await ru
        .locator('[data-testid="wfg-node"][data-victim="true"]')
        .evaluateAll((els) => els.map((e) => e.dataset.session));
      assert(victims.join() === 'B', `the lesson embed marks [${victims}] as the victim at step 6, expected B`);
      await ctx.shot('ru-dark-1440', true);
      await ctx.page.setViewportSize({ width: 390, height: 844 });
      await ctx.page.waitForTimeout(300);
      const wide = await ru.locator('html').evaluate((el) => el.scrollWidth - el.clientWidth);
      assert(wide <= 1, `at 390 px the embed is ${wide} px wider than its frame`);
      await ctx.shot('ru-dark-390', true);

      // The same snippet in a page opened from a file.
      const dir = mkdtempSync(join(tmpdir(), 'lockstep-embed-'));
      try {
        writeFileSync(
          join(dir, 'post.html'),
          `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>post</title>${snippet}`,
        );
        await ctx.page.goto(pathToFileURL(join(dir, 'post.html')).href);
        const fromFile = ctx.page.frameLocator('iframe');
        await waitFor(
          async () => (await fromFile.getByTestId('session-pane').count()) === 2,
          'the embed does not play in a page opened from a file',
          40_000,
        );
        await frameNext(fromFile);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    } finally {
      await host.close();
    }
  },
};

export const FLOWS: Flow[] = [offlineLesson, updateToast, embedFrame];
