/** The iframe snippet the lab's share dialog offers for a shared scenario (pure). */

/** The embed URL of a share code on the app at `base` (its hash is replaced). */
export function embedUrl(base: string, code: string): string {
  return `${base.replace(/#.*$/, '')}#/embed/lab?s=${code}`;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '"': '&quot;', '<': '&lt;', '>': '&gt;' };

/** An `<iframe>` element for `url`, 800×500, titled for screen readers; attribute values are escaped. */
export function iframeSnippet(url: string, title: string): string {
  const attr = (v: string) => v.replace(/[&"<>]/g, (c) => ESCAPES[c]);
  return `<iframe src="${attr(url)}" width="800" height="500" title="${attr(title)}" loading="lazy" style="border:0;max-width:100%"></iframe>`;
}
