import { launchChromium, previewDist } from '../tests/e2e/browser';
const [, , outPrefix, ...specs] = process.argv;
// spec: name|hash|WxH|presenter(0/1)|theme|lang
const { server, baseUrl } = await previewDist();
const browser = await launchChromium();
try {
  for (const spec of specs) {
    const [name, hash, wh, pres, theme, lang] = spec.split('|');
    const [w, h] = wh.split('x').map(Number);
    const ctx = await browser.newContext({ viewport: { width: w, height: h } });
    await ctx.addInitScript(({ pres, theme, lang }) => {
      const k = 'lockstep.prefs';
      void k;
      (window as any).__prefs = { pres, theme, lang };
    }, { pres, theme, lang });
    const page = await ctx.newPage();
    page.on('console', (m) => { if (m.type() === 'error') console.log('console error:', m.text()); });
    page.on('pageerror', (e) => console.log('pageerror', e.message));
    await page.goto(baseUrl + '#/');
    await page.waitForTimeout(300);
    if (lang === 'ru') await page.getByTestId('lang-switch').selectOption('ru');
    if (theme === 'dark') await page.getByTestId('theme-toggle').click();
    if (pres === '1') await page.getByTestId('presenter-toggle').click();
    await page.goto(baseUrl + hash);
    await page.waitForTimeout(5000);
    const m = await page.evaluate(() => ({ sw: document.documentElement.scrollWidth, sh: document.documentElement.scrollHeight }));
    console.log(name, JSON.stringify(m));
    await page.screenshot({ path: `${outPrefix}${name}.png`, fullPage: false });
    await page.screenshot({ path: `${outPrefix}${name}-full.png`, fullPage: true });
    await ctx.close();
  }
} finally {
  await browser.close();
  await server.close();
}
