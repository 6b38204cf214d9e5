import { describe, expect, it } from 'vitest';
import { highlight, hlText, parseHljsHtml } from './highlight';

describe('parseHljsHtml', () => {
  it.each([
    { args: 'plain', expected: [{ text: 'plain' }] },
    { args: '<span class="hljs-keyword">func</span> f', expected: [{ cls: 'hljs-keyword', children: [{ text: 'func' }] }, { text: ' f' }] },
    { args: '&lt;script&gt; &amp; &quot;x&quot; &#x27;y&#x27;', expected: [{ text: `<script> & "x" 'y'` }] },
    {
      args: '<span class="hljs-title function_">a<span class="hljs-params">b</span></span>',
      expected: [{ cls: 'hljs-title function_', children: [{ text: 'a' }, { cls: 'hljs-params', children: [{ text: 'b' }] }] }],
    },
    // Never produced by highlight.js; stays text rather than markup.
    { args: '<img src=x onerror=alert(1)>', expected: [{ text: '<img src=x onerror=alert(1)>' }] },
    { args: '</span>x', expected: [{ text: '</span>x' }] },
    // Class names keep only class-name characters.
    { args: '<span class="a&quot;onclick=x">t</span>', expected: [{ cls: 'aquotonclickx', children: [{ text: 't' }] }] },
  ])('$args', ({ args, expected }) => expect(parseHljsHtml(args)).toEqual(expected));
});

describe('highlight', () => {
  const sources = {
    go: 'func main() {\n\t// <script>alert(1)</script>\n\ts := "</span><b>&amp;"\n}',
    sql: "SELECT '<script>' AS x, 1 & 2 FROM t WHERE a < b; -- </code>",
    ts: 'const x: string = `<img src=x onerror=alert(1)>`; // &lt;',
  } as const;
  it.each(Object.entries(sources) as [keyof typeof sources, string][])('%s keeps the exact source text', (language, source) => {
    const tree = highlight(source, language);
    expect(hlText(tree)).toBe(source);
    expect(tree.some((n) => 'cls' in n)).toBe(true);
  });
});
