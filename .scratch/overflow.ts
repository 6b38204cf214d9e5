import { launchChromium, previewDist } from '../tests/e2e/browser';
const { server, baseUrl } = await previewDist();
const browser = await launchChromium();
for (const hash of process.argv.slice(2)) {
  const ctx = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await ctx.newPage();
  await page.goto(baseUrl + hash);
  await page.waitForTimeout(6000);
  if (hash.includes('lab')) { await page.getByTestId('lab-blank').click().catch(() => {}); await page.waitForTimeout(1000); }
  const r = await page.evaluate(() => {
    const out: string[] = [];
    for (const el of document.querySelectorAll('body *')) {
      const b = el.getBoundingClientRect();
      if (b.right > 391 && b.width > 0) {
        let p = el.parentElement; let clipped = false;
        for (; p; p = p.parentElement) { const cs = getComputedStyle(p); if (cs.overflowX !== 'visible' && p.getBoundingClientRect().right <= 391) { clipped = true; break; } }
        if (!clipped) out.push(`${el.tagName.toLowerCase()}.${[...el.classList].join('.')} [${el.getAttribute('data-testid') ?? ''}] right=${Math.round(b.right)} w=${Math.round(b.width)}`);
      }
    }
    return { sw: document.documentElement.scrollWidth, out: out.slice(0, 25) };
  });
  console.log(hash, r.sw); for (const l of r.out) console.log('  ', l);
  await page.screenshot({ path: `/tmp/shots/o390-${hash.replace(/\W/g, '')}.png`, fullPage: true });
  await ctx.close();
}
await browser.close(); await server.close();
