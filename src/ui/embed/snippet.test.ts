import { describe, expect, it } from 'vitest';
import { embedUrl, iframeSnippet } from './snippet';
import { parseRoute } from '../model/route';

describe('embed snippet', () => {
  it('points at the embed route of the same app, whatever the current hash', () => {
    const url = embedUrl('https://example.test/lockstep/index.html#/lab?s=old', 'eJzLSM3JyQcABiwCFQ');
    expect(url).toBe('https://example.test/lockstep/index.html#/embed/lab?s=eJzLSM3JyQcABiwCFQ');
    expect(parseRoute(new URL(url).hash)).toEqual({ name: 'embed-lab', s: 'eJzLSM3JyQcABiwCFQ', look: {} });
  });

  it('escapes the title and the URL inside the attributes', () => {
    const html = iframeSnippet('https://x.test/#/embed/lab?s=a&lang=ru', 'Deadlock "A" <b> & co');
    expect(html).toBe(
      '<iframe src="https://x.test/#/embed/lab?s=a&amp;lang=ru" width="800" height="500" title="Deadlock &quot;A&quot; &lt;b&gt; &amp; co" loading="lazy" style="border:0;max-width:100%"></iframe>',
    );
    const doc = new DOMParser().parseFromString(html, 'text/html');
    const frame = doc.querySelector('iframe');
    expect(frame?.getAttribute('src')).toBe('https://x.test/#/embed/lab?s=a&lang=ru');
    expect(frame?.getAttribute('title')).toBe('Deadlock "A" <b> & co');
  });
});
