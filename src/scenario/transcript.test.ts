import { afterAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSpec } from './spec';
import { specTitle as specTitleOf } from './labScenario';
import { runSpec } from './isolation';
import { transcriptMarkdown, transcriptText } from './transcript';
import { SimDriver } from '../sim/simDriver';
import { expectFile } from '../../tests/support/expectedFile';

/**
 * Fixture pairs: tests/fixtures/lab/transcripts/NN-name.spec → NN-name.expected.md, compared by
 * expectFile (a mismatch leaves NN-name.changed.md beside it for review). These transcripts
 * render the simulator's run: they test the Markdown writer, not PostgreSQL's behaviour.
 */
const dir = join(__dirname, '..', '..', 'tests', 'fixtures', 'lab', 'transcripts');
const specs = readdirSync(dir).filter((f) => f.endsWith('.spec'));

describe('Markdown transcripts', () => {
  const driver = new SimDriver();
  afterAll(() => driver.close());

  it.each(specs)(
    '%s',
    async (file) => {
      const text = readFileSync(join(dir, file), 'utf8');
      const spec = parseSpec(text);
      const runs = await runSpec(spec, driver, { permutation: 1 });
      const md = transcriptMarkdown(spec, runs, specTitleOf(text));
      expect(transcriptText(spec, runs)).toContain(`starting permutation: ${runs[0].permutation}`);
      await expectFile(md, join(dir, file.replace(/\.spec$/, '.expected.md')));
    },
    60_000,
  );

  it('escapes table-breaking characters and keeps fences longer than the code', () => {
    const md = transcriptMarkdown(
      { setup: ['SELECT 1 ```'], sessions: [{ name: 'a|b', steps: [] }], permutations: [] },
      [
        {
          permutation: 'x',
          setup: [],
          teardown: [],
          records: [
            {
              event: { step: 'x', session: 'a|b', outcome: 'ok', commands: ['SELECT 1'] },
              sql: 'SELECT 1 | 2\n<b>',
              result: { results: [{ command: 'SELECT 1', columns: ['c|d'], rows: [['1|2']] }], notices: [] },
            },
          ],
        },
      ],
      'T <script>',
    );
    expect(md).toContain('# T &lt;script>');
    expect(md).toContain('````sql\nSELECT 1 ```\n````');
    expect(md).toContain('| Session a\\|b |');
    expect(md).toContain('`SELECT 1 \\| 2 &lt;b>`');
    expect(md).toContain('| c\\|d |');
  });
});
