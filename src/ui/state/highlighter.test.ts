import { describe, expect, it, vi } from 'vitest';

// Counts the sources each language's highlighter is asked for (the real grammars still parse them).
const asked: string[] = [];
vi.mock('../model/highlight', async (importOriginal) => {
  const real = await importOriginal<typeof import('../model/highlight')>();
  return {
    ...real,
    highlighterFor: async (language: Parameters<typeof real.highlighterFor>[0]) => {
      const h = await real.highlighterFor(language);
      return (source: string) => {
        asked.push(`${language}: ${source}`);
        return h(source);
      };
    },
  };
});

const { warmHighlights } = await import('./highlighter.svelte');

describe('warmHighlights', () => {
  it('highlights every source ahead, loading each grammar it needs', async () => {
    asked.length = 0;
    warmHighlights([
      { source: 'package bank', language: 'go' },
      { source: 'SELECT 1;', language: 'sql' },
      { source: 'COMMIT;', language: 'sql' },
    ]);
    await vi.waitFor(() => expect(asked).toEqual(['go: package bank', 'sql: SELECT 1;', 'sql: COMMIT;']), { timeout: 5000 });
  });

  it('does nothing once cancelled', async () => {
    asked.length = 0;
    const cancel = warmHighlights([{ source: 'SELECT 2;', language: 'sql' }]);
    cancel();
    await new Promise((r) => setTimeout(r, 200));
    expect(asked).toEqual([]);
  });
});
