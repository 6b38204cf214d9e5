/**
 * Renders the app icons in public/ from their SVG sources with Debian's Chromium:
 * `npx tsx scripts/icons.ts`. The PNGs are committed (the build does not need a browser); run this
 * again after editing public/icon.svg or public/icon-maskable.svg.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, launchChromium } from '../tests/e2e/browser';

const PUBLIC = join(ROOT, 'public');

/** Each PNG: its file, its SVG source and its size in pixels. */
const TARGETS: { file: string; svg: string; size: number }[] = [
  { file: 'icon-192.png', svg: 'icon.svg', size: 192 },
  { file: 'icon-512.png', svg: 'icon.svg', size: 512 },
  { file: 'icon-maskable-192.png', svg: 'icon-maskable.svg', size: 192 },
  { file: 'icon-maskable-512.png', svg: 'icon-maskable.svg', size: 512 },
  { file: 'apple-touch-icon.png', svg: 'icon-maskable.svg', size: 180 },
];

async function main(): Promise<void> {
  const browser = await launchChromium();
  try {
    for (const t of TARGETS) {
      const page = await browser.newPage({ viewport: { width: t.size, height: t.size }, deviceScaleFactor: 1 });
      const svg = readFileSync(join(PUBLIC, t.svg), 'utf8');
      const src = `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
      await page.setContent(
        `<html><body style="margin:0;background:transparent"><img src="${src}" width="${t.size}" height="${t.size}" style="display:block"></body></html>`,
      );
      await page.locator('img').evaluate((img: HTMLImageElement) => img.decode());
      writeFileSync(
        join(PUBLIC, t.file),
        await page.screenshot({ omitBackground: true, clip: { x: 0, y: 0, width: t.size, height: t.size } }),
      );
      await page.close();
      console.log(`public/${t.file} (${t.size}×${t.size}) from public/${t.svg}`);
    }
  } finally {
    await browser.close();
  }
}

void main();
