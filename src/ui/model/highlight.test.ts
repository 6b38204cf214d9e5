import { describe, expect, it } from 'vitest';
import { highlighterFor, hlText, remembered } from './highlight';
import type { CodeLanguage } from '../backend';

const highlight = async (source: string, language: CodeLanguage) => (await highlighterFor(language))(source);

/** The classed runs of a highlight, as `class:text` strings, in order. */
const tokens = async (source: string, language: CodeLanguage) =>
  (await highlight(source, language)).flatMap((r) => (r.cls ? [`${r.cls}:${r.text}`] : []));

describe('highlight', () => {
  it.each([
    {
      language: 'sql',
      source: "SELECT balance FROM accounts WHERE acct = 1 FOR UPDATE; -- lock 'it'",
      expected: [
        'syn-keyword:SELECT',
        'syn-keyword:FROM',
        'syn-keyword:WHERE',
        'syn-number:1',
        'syn-keyword:FOR',
        'syn-keyword:UPDATE',
        "syn-comment:-- lock 'it'",
      ],
    },
    { language: 'sql', source: "SET lock_timeout = '2s'", expected: ['syn-keyword:SET', "syn-string:'2s'"] },
    {
      language: 'sql',
      source: 'SELECT NULL::int, true',
      expected: ['syn-keyword:SELECT', 'syn-number:NULL', 'syn-type:int', 'syn-number:true'],
    },
    {
      language: 'go',
      source: 'if err != nil { return "x" }',
      expected: ['syn-keyword:if', 'syn-number:nil', 'syn-keyword:return', 'syn-string:"x"'],
    },
    {
      language: 'ts',
      source: 'const n: number = 40001; // retry',
      expected: ['syn-keyword:const', 'syn-type:number', 'syn-number:40001', 'syn-comment:// retry'],
    },
  ] as const)('$language: $source', async ({ language, source, expected }) => {
    expect(await tokens(source, language)).toEqual(expected);
  });

  const sources = {
    go: 'func main() {\n\t// <script>alert(1)</script>\n\ts := "</span><b>&amp;"\n}',
    sql: "SELECT '<script>' AS x, 1 & 2 FROM t WHERE a < b;\n-- </code>",
    ts: 'const x: string = `<img src=x onerror=alert(1)>`; // &lt;',
  } as const;
  it.each(Object.entries(sources) as [keyof typeof sources, string][])(
    '%s keeps the exact source text, markup included',
    async (language, source) => {
      const runs = await highlight(source, language);
      expect(hlText(runs)).toBe(source);
      expect(runs.some((r) => r.cls)).toBe(true);
      // Neighbouring runs of one class are merged, so no two runs in a row share a class.
      expect(runs.every((r, i) => i === 0 || (r.cls ?? '') !== (runs[i - 1].cls ?? ''))).toBe(true);
    },
  );

  it('yields the plain text for a language it does not know', async () => {
    expect(await highlight('x', 'cobol' as never)).toEqual([{ text: 'x' }]);
  });
});

describe('remembered', () => {
  it('answers a source seen before with the same runs, and forgets the oldest past its size', () => {
    let calls = 0;
    const h = remembered((source) => (calls++, [{ text: source }]), 2);
    const a = h('SELECT 1');
    expect(h('SELECT 1')).toBe(a);
    h('SELECT 2');
    h('SELECT 3');
    expect(calls).toBe(3);
    expect(h('SELECT 1')).not.toBe(a);
    expect(hlText(h('SELECT 1'))).toBe('SELECT 1');
    expect(calls).toBe(4);
  });
});
