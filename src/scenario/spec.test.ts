import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findStep, MAX_SESSIONS, MAX_SPEC_BYTES, parseSpec, quoteName, SpecParseError, unusedSteps, writeSpec } from './spec';
import type { Spec } from './types';

const here = fileURLToPath(new URL('.', import.meta.url));
const fixtureDir = join(here, '__fixtures__');
const conformanceDir = join(here, '..', '..', 'tests', 'conformance');

function specFiles(dir: string): string[] {
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.spec'))
        .sort()
    : [];
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value as object)) deepFreeze(child);
  }
  return value;
}

/** parse → write → parse gives the same Spec, writing is stable, and writeSpec leaves its input alone. */
function expectRoundTrip(text: string): Spec {
  const spec = deepFreeze(parseSpec(text));
  const written = writeSpec(spec);
  const again = parseSpec(written);
  expect(again).toStrictEqual(spec);
  expect(writeSpec(again)).toBe(written);
  return spec;
}

/** Runs parseSpec and returns the SpecParseError it must throw. */
function parseError(text: string): SpecParseError {
  try {
    parseSpec(text);
  } catch (error) {
    expect(error).toBeInstanceOf(SpecParseError);
    return error as SpecParseError;
  }
  throw new Error('parseSpec accepted the text');
}

describe('fixtures', () => {
  const files = specFiles(fixtureDir);

  it('has at least ten fixtures', () => {
    expect(files.length).toBeGreaterThanOrEqual(10);
  });

  it.each(files)('%s round-trips', (file) => {
    expectRoundTrip(readFileSync(join(fixtureDir, file), 'utf8'));
  });
});

describe('tests/conformance specs', () => {
  const files = specFiles(conformanceDir);

  it('finds the corpus', () => {
    expect(files.length).toBeGreaterThanOrEqual(60);
  });

  it.each(files)('%s round-trips', (file) => {
    expectRoundTrip(readFileSync(join(conformanceDir, file), 'utf8'));
  });
});

describe('parseSpec: what the scanner and grammar produce', () => {
  const read = (name: string): Spec => parseSpec(readFileSync(join(fixtureDir, name), 'utf8'));

  it('reads setup blocks, teardown, per-session setup/teardown and permutations', () => {
    expect(read('session-setup-teardown.spec')).toStrictEqual({
      setup: [
        'CREATE TABLE queue (id int PRIMARY KEY, taken boolean DEFAULT false);',
        'INSERT INTO queue SELECT g FROM generate_series(1, 3) g;',
      ],
      teardown: 'DROP TABLE queue;',
      sessions: [
        {
          name: 'worker1',
          setup: "\n  BEGIN;\n  SET LOCAL lock_timeout = '1s';\n",
          steps: [
            { name: 'w1take', sql: 'SELECT id FROM queue WHERE NOT taken ORDER BY id LIMIT 1 FOR UPDATE;' },
            { name: 'w1done', sql: 'COMMIT;' },
          ],
          teardown: "SELECT 'worker1 done';",
        },
        {
          name: 'worker2',
          setup: 'BEGIN;',
          steps: [
            { name: 'w2take', sql: 'SELECT id FROM queue WHERE NOT taken ORDER BY id LIMIT 1 FOR UPDATE;' },
            { name: 'w2done', sql: 'COMMIT;' },
          ],
          teardown: '\n  RESET lock_timeout;\n',
        },
      ],
      permutations: [
        {
          steps: [
            { step: 'w1take', blockers: [] },
            { step: 'w2take', blockers: [] },
            { step: 'w1done', blockers: [] },
            { step: 'w2done', blockers: [] },
          ],
        },
      ],
    });
  });

  it('reads all three blocker kinds, several per step', () => {
    const spec = read('blockers.spec');
    expect(spec.permutations.map((p) => p.steps.filter((s) => s.blockers.length > 0))).toStrictEqual([
      [{ step: 's2wait', blockers: [{ kind: 'star' }] }],
      [{ step: 's3insert', blockers: [{ kind: 'step', step: 's2wait' }] }],
      [{ step: 's3insert', blockers: [{ kind: 'step', step: 's2wait', notices: 1 }] }],
      [
        { step: 's2wait', blockers: [{ kind: 'star' }] },
        {
          step: 's3insert',
          blockers: [{ kind: 'star' }, { kind: 'step', step: 's2wait' }, { kind: 'step', step: 's1unlock', notices: 0 }],
        },
      ],
      [
        { step: 's2wait', blockers: [{ kind: 'step', step: 's1unlock' }] },
        { step: 's2commit', blockers: [{ kind: 'step', step: 's3insert', notices: 2 }] },
      ],
    ]);
  });

  it('reads quoted names with spaces, doubled quotes, keywords and non-ASCII letters', () => {
    const spec = read('quoted-names.spec');
    expect(spec.sessions.map((s) => s.name)).toEqual(['reader one', 'écrivain']);
    expect(spec.sessions.flatMap((s) => s.steps.map((t) => t.name))).toEqual([
      'r1 read',
      'setup',
      'say "hi"',
      'r1 commit',
      'w1_update',
      '1st',
      'notices',
    ]);
  });

  it('ignores # comments outside SQL and keeps them inside SQL', () => {
    const spec = read('comments.spec');
    expect(spec.sessions.map((s) => s.name)).toEqual(['s1', 's2#hash']);
    expect(spec.sessions[0].steps[0].sql).toBe('INSERT INTO c VALUES (1); -- an SQL comment is kept\n    # and so is a hash inside SQL\n');
    expect(spec.sessions[0].steps[1].sql).toBe("SELECT '#not a comment' AS text;");
    expect(spec.permutations.map((p) => p.steps.map((s) => s.step))).toEqual([
      ['s1a', 's2a', 's1b'],
      ['s2a', 's1a', 's1b'],
    ]);
  });

  it('keeps opening braces in SQL', () => {
    const steps = read('braces-in-sql.spec').sessions.flatMap((s) => s.steps);
    expect(steps.map((s) => s.sql)).toEqual([
      "SELECT '{' AS brace, chr(125) AS close_brace;",
      'UPDATE docs SET body = body || chr(125) WHERE id = 1;',
      "DO $body$ BEGIN PERFORM '{{{'; END $body$;",
      'SELECT body FROM docs WHERE id = 1 FOR SHARE;',
      "SELECT ARRAY[1, 2, 3] AS a, '{' || '1,2' AS half;",
    ]);
  });

  it.each([
    { text: 'session s\nstep a {  SELECT 1;  }', sql: 'SELECT 1;' },
    { text: 'session s\nstep a {\t\fSELECT 1;\t\r}', sql: 'SELECT 1;' },
    { text: 'session s\nstep a {\n  SELECT 1;\n}', sql: '\n  SELECT 1;\n' },
    { text: 'session s\nstep a {  \n  SELECT 1;  \n  }', sql: '\n  SELECT 1;  \n' },
    { text: 'session s\nstep a {}', sql: '' },
    { text: 'session s\nstep a {   }', sql: '' },
    { text: 'session s\nstep a { \n }', sql: '\n' },
    { text: 'session s\r\nstep a {\r\n  SELECT 1;\r\n}\r\n', sql: '\n  SELECT 1;\r\n' },
    { text: 'session s\nstep a { SELECT "{" }', sql: 'SELECT "{"' },
  ])('trims only spaces, tabs, CR and FF around SQL: $sql', ({ text, sql }) => {
    expect(parseSpec(text).sessions[0].steps[0].sql).toBe(sql);
  });

  it.each([
    { text: 'session setupx\nstep stepper { }', session: 'setupx', step: 'stepper' },
    { text: 'session Setup\nstep STEP { }', session: 'Setup', step: 'STEP' },
    { text: 'session _s$1\nstep a$b_2 { }', session: '_s$1', step: 'a$b_2' },
    { text: 'session sé\nstep 步骤 { }', session: 'sé', step: '步骤' },
    { text: 'session ""\nstep "a""" { }', session: '', step: 'a"' },
    { text: 'session "#x"\nstep "()" { }', session: '#x', step: '()' },
  ])('reads identifier $session / $step', ({ text, session, step }) => {
    const spec = parseSpec(text);
    expect(spec.sessions[0].name).toBe(session);
    expect(spec.sessions[0].steps[0].name).toBe(step);
    expectRoundTrip(text);
  });

  it('reads conninfo at the top and per session (newest grammar)', () => {
    const spec = expectRoundTrip('conninfo "dbname=lockstep"\nsession s1 conninfo "application_name=s1"\nstep a { }');
    expect(spec.conninfo).toBe('dbname=lockstep');
    expect(spec.sessions[0].conninfo).toBe('application_name=s1');
  });

  it('allows blockers on later steps and in any whitespace layout', () => {
    const spec = expectRoundTrip('session a\nstep a1 { }\nsession b\nstep b1 { }\npermutation a1 ( b1 notices 3 , * )b1');
    expect(spec.permutations[0].steps[0].blockers).toEqual([{ kind: 'step', step: 'b1', notices: 3 }, { kind: 'star' }]);
  });

  it(`accepts more than MAX_SESSIONS (${MAX_SESSIONS}) sessions`, () => {
    const text = Array.from({ length: MAX_SESSIONS + 1 }, (_, i) => `session s${i}\nstep t${i} { }`).join('\n');
    expect(parseSpec(text).sessions).toHaveLength(MAX_SESSIONS + 1);
  });

  it('leaves out optional keys that the text does not have', () => {
    const spec = parseSpec('session s\nstep a { }');
    expect(spec).toStrictEqual({
      setup: [],
      sessions: [{ name: 's', steps: [{ name: 'a', sql: '' }] }],
      permutations: [],
    });
  });
});

describe('parseSpec errors', () => {
  it.each([
    {
      what: 'unknown step in a permutation',
      text: 'session s1\nstep s1a { SELECT 1; }\npermutation s1a s9',
      line: 3,
      column: 17,
      message: 'line 3: unknown step "s9" in permutation',
    },
    {
      what: 'duplicate step across sessions',
      text: 'session s1\nstep a { }\nsession s2\nstep a { }',
      line: 4,
      column: 6,
      message: 'line 4: duplicate step name "a"',
    },
    {
      what: 'duplicate session',
      text: 'session s1\nstep a { }\nsession s1\nstep b { }',
      line: 3,
      column: 9,
      message: 'line 3: duplicate session name "s1"',
    },
    {
      what: 'unterminated SQL block',
      text: 'setup { CREATE TABLE t (i int);\n\nsession s1',
      line: 1,
      column: 7,
      message: /unterminated SQL block/,
    },
    {
      what: 'unterminated quoted identifier',
      text: 'session "s1',
      line: 1,
      column: 9,
      message: /unterminated quoted identifier/,
    },
    {
      what: 'newline in quoted identifier',
      text: 'session "s\n1"',
      line: 1,
      column: 11,
      message: /newline in quoted identifier/,
    },
    {
      what: 'closing brace inside an SQL string ends the block',
      text: "session s1\nstep a { SELECT '}' }",
      line: 2,
      column: 19,
      message: `line 2: unexpected character "'"`,
    },
    {
      what: 'stray closing brace',
      text: 'session s1\nstep a { }\n}',
      line: 3,
      column: 1,
      message: /unexpected character "}"/,
    },
    {
      what: 'stray semicolon',
      text: 'session s1;\nstep a { }',
      line: 1,
      column: 11,
      message: /unexpected character ";"/,
    },
    {
      what: 'stray name',
      text: 'session s1\nstep a { }\n\n  foo',
      line: 4,
      column: 3,
      message: 'line 4: unexpected name "foo" after the sessions',
    },
    {
      what: 'session without steps',
      text: 'session s1\nsession s2\nstep a { }',
      line: 2,
      column: 1,
      message: /session "s1" has no steps/,
    },
    {
      what: 'two setups in one session',
      text: 'session s1\nsetup { }\nsetup { }\nstep a { }',
      line: 3,
      column: 1,
      message: /at most one setup/,
    },
    {
      what: 'no session at all',
      text: 'setup { }\n',
      line: 2,
      column: 1,
      message: 'line 2: expected "session", found end of file',
    },
    { what: 'empty text', text: '', line: 1, column: 1, message: /expected "session"/ },
    {
      what: 'setup after teardown',
      text: 'teardown { }\nsetup { }\nsession s\nstep a { }',
      line: 2,
      column: 1,
      message: /global setup blocks come first/,
    },
    {
      what: 'two global teardowns',
      text: 'teardown { }\nteardown { }\nsession s\nstep a { }',
      line: 2,
      column: 1,
      message: /expected "session"/,
    },
    {
      what: 'global setup after sessions',
      text: 'session s\nstep a { }\nsetup { }',
      line: 3,
      column: 1,
      message: /unexpected keyword "setup"/,
    },
    {
      what: 'keyword as bare name',
      text: 'session setup\nstep a { }',
      line: 1,
      column: 9,
      message: /keywords must be double-quoted/,
    },
    {
      what: 'name starting with a digit',
      text: 'session s\nstep 1a { }',
      line: 2,
      column: 6,
      message: /expected a step name after "step", found number 1/,
    },
    {
      what: 'step without SQL',
      text: 'session s\nstep a\nstep b { }',
      line: 3,
      column: 1,
      message: /expected "\{" to open the SQL block after step "a"/,
    },
    {
      what: 'empty permutation',
      text: 'session s\nstep a { }\npermutation\n',
      line: 4,
      column: 1,
      message: /expected a step name after "permutation"/,
    },
    {
      what: 'unclosed marker',
      text: 'session s\nstep a { }\nsession t\nstep b { }\npermutation a(b',
      line: 5,
      column: 16,
      message: /expected "," or "\)"/,
    },
    {
      what: 'empty marker',
      text: 'session s\nstep a { }\npermutation a()',
      line: 3,
      column: 15,
      message: /expected a blocker/,
    },
    {
      what: 'notices without a number',
      text: 'session s\nstep a { }\nsession t\nstep b { }\npermutation b a(b notices)',
      line: 5,
      column: 26,
      message: /expected a number after "notices"/,
    },
    {
      what: 'notices count too large',
      text: 'session s\nstep a { }\nsession t\nstep b { }\npermutation b a(b notices 99999999999)',
      line: 5,
      column: 27,
      message: /too large/,
    },
    {
      what: 'blocker not in the permutation',
      text: 'session s\nstep a { }\nsession t\nstep b { }\nstep c { }\npermutation c a(b)',
      line: 6,
      column: 17,
      message: 'line 6: blocker "b" of step "a" is not in this permutation',
    },
    {
      what: 'blocker that is no step',
      text: 'session s\nstep a { }\npermutation a(zz)',
      line: 3,
      column: 15,
      message: 'line 3: blocker "zz" of step "a" is not a step of this spec',
    },
    {
      what: 'blocker in its own session',
      text: 'session s\nstep a { }\nstep a2 { }\npermutation a2 a(a2)',
      line: 4,
      column: 18,
      message: 'line 4: step "a" cannot block on step "a2" of its own session "s"',
    },
    {
      what: 'vertical tab',
      text: 'session s\x0b\nstep a { }',
      line: 1,
      column: 10,
      message: /unexpected character "\\u000b"/,
    },
  ])('$what', ({ text, line, column, message }) => {
    const error = parseError(text);
    expect({ line: error.line, column: error.column }).toEqual({ line, column });
    if (typeof message === 'string') expect(error.message).toBe(message);
    else expect(error.message).toMatch(message);
  });

  it('rejects input over the size limit before scanning', () => {
    const error = parseError(`session s\nstep a { }\n#${'x'.repeat(MAX_SPEC_BYTES)}`);
    expect({ line: error.line, column: error.column }).toEqual({ line: 1, column: 1 });
    expect(error.message).toMatch(/spec is too large \(\d+ bytes; the limit is 1048576 bytes\)/);
  });

  it('measures the limit in UTF-8 bytes', () => {
    const euros = '€'.repeat(Math.ceil(MAX_SPEC_BYTES / 3) + 1); // fewer characters than the limit, more bytes
    expect(euros.length).toBeLessThan(MAX_SPEC_BYTES);
    expect(parseError(`session s\nstep a { SELECT '${euros}'; }`).message).toMatch(/too large/);
    const justUnder = `session s\nstep a { ${'y'.repeat(MAX_SPEC_BYTES - 100)} }`;
    expect(parseSpec(justUnder).sessions[0].steps[0].sql).toHaveLength(MAX_SPEC_BYTES - 100);
  });

  it('never crashes or hangs on mangled specs (seeded fuzz)', () => {
    // Deterministic LCG (Numerical Recipes constants), as the house style asks for seeded randomness.
    let seed = 20261129;
    const random = (n: number): number => {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      return seed % n;
    };
    const pieces = [
      'session ',
      'step ',
      'setup ',
      'teardown ',
      'permutation ',
      'notices ',
      'conninfo ',
      '{',
      '}',
      '(',
      ')',
      ',',
      '*',
      '"',
      '""',
      '#',
      '\n',
      ' ',
      's1',
      'a',
      '7',
      "'",
      ';',
      '\u00e9',
    ];
    const fixtures = specFiles(fixtureDir).map((f) => readFileSync(join(fixtureDir, f), 'utf8'));
    let parsed = 0;
    for (let round = 0; round < 3000; round++) {
      let text: string;
      if (round % 2 === 0) {
        text = Array.from({ length: 1 + random(40) }, () => pieces[random(pieces.length)]).join('');
      } else {
        text = fixtures[random(fixtures.length)];
        for (let edits = 1 + random(3); edits > 0; edits--) {
          const at = random(text.length + 1);
          text = text.slice(0, at) + pieces[random(pieces.length)] + text.slice(at + random(3));
        }
      }
      try {
        expectRoundTrip(text);
        parsed++;
      } catch (error) {
        if (!(error instanceof SpecParseError)) throw error;
        expect(error.line).toBeGreaterThanOrEqual(1);
        expect(error.column).toBeGreaterThanOrEqual(1);
        expect(error.message).toMatch(/^line \d+: /);
      }
    }
    expect(parsed).toBeGreaterThan(0);
  });
});

describe('writeSpec', () => {
  it('writes the canonical layout', () => {
    const text = [
      '# comments and odd spacing are not kept',
      'setup{CREATE TABLE t(i int);}   setup {',
      'INSERT INTO t VALUES (1);',
      '}',
      'teardown   {DROP TABLE t;}',
      'session "s 1" setup { BEGIN; } step "a" {UPDATE t SET i = 2;} step b {',
      '  COMMIT;',
      '} teardown { }',
      'session s2 step c { SELECT * FROM t; }',
      'permutation a c(a) b',
      'permutation c a(*) b',
    ].join('\n');
    expect(writeSpec(parseSpec(text))).toBe(
      [
        'setup { CREATE TABLE t(i int); }',
        '',
        'setup {',
        'INSERT INTO t VALUES (1);',
        '}',
        '',
        'teardown { DROP TABLE t; }',
        '',
        'session "s 1"',
        'setup { BEGIN; }',
        'step a { UPDATE t SET i = 2; }',
        'step b {',
        '  COMMIT;',
        '}',
        'teardown { }',
        '',
        'session s2',
        'step c { SELECT * FROM t; }',
        '',
        'permutation a c(a) b',
        'permutation c a(*) b',
        '',
      ].join('\n'),
    );
  });

  it.each([
    { sql: 'SELECT 1 }', problem: /contains "\}"/ },
    { sql: ' SELECT 1', problem: /starts or ends with a space/ },
    { sql: 'SELECT 1\t', problem: /starts or ends with a space/ },
  ])('refuses SQL it cannot write unchanged: $sql', ({ sql, problem }) => {
    const spec: Spec = deepFreeze({
      setup: [],
      sessions: [{ name: 's', steps: [{ name: 'a', sql }] }],
      permutations: [],
    });
    expect(() => writeSpec(spec)).toThrow(problem);
  });

  it('refuses names with a newline', () => {
    const spec: Spec = deepFreeze({
      setup: [],
      sessions: [{ name: 's\n1', steps: [{ name: 'a', sql: '' }] }],
      permutations: [],
    });
    expect(() => writeSpec(spec)).toThrow(/contains a newline/);
  });

  it('writes specs built in code that parse back equal', () => {
    const spec: Spec = deepFreeze({
      setup: ['CREATE TABLE t (i int);', '\nINSERT INTO t VALUES (1);\n'],
      teardown: 'DROP TABLE t;',
      sessions: [
        {
          name: 'step',
          setup: 'BEGIN;',
          steps: [{ name: 'x y', sql: 'SELECT "}"'.replace('}', '{') }],
          teardown: 'COMMIT;',
        },
        { name: 's2', steps: [{ name: 'permutation', sql: 'SELECT 1;\nSELECT 2;' }] },
      ],
      permutations: [
        {
          steps: [
            { step: 'x y', blockers: [{ kind: 'star' }] },
            { step: 'permutation', blockers: [{ kind: 'step', step: 'x y', notices: 2 }] },
          ],
        },
      ],
    });
    expect(parseSpec(writeSpec(spec))).toStrictEqual(spec);
  });
});

describe('quoteName', () => {
  it.each([
    ['s1', 's1'],
    ['_a$9', '_a$9'],
    ['écrivain', 'écrivain'],
    ['1st', '"1st"'],
    ['$a', '"$a"'],
    ['with space', '"with space"'],
    ['say "hi"', '"say ""hi"""'],
    ['', '""'],
    ['setup', '"setup"'],
    ['notices', '"notices"'],
    ['conninfo', '"conninfo"'],
    ['Setup', 'Setup'],
  ])('%j → %s', (name, quoted) => {
    expect(quoteName(name)).toBe(quoted);
  });
});

describe('findStep and unusedSteps', () => {
  const spec = deepFreeze(parseSpec(readFileSync(join(fixtureDir, 'repeated-and-empty-steps.spec'), 'utf8')));

  it.each([
    { name: 's1lock', session: 's1', sql: 'LOCK TABLE pg_class IN ACCESS SHARE MODE;' },
    { name: 's2noop', session: 's2', sql: '' },
  ])('finds $name in session $session', ({ name, session, sql }) => {
    const found = findStep(spec, name);
    expect(found?.session.name).toBe(session);
    expect(found?.step).toStrictEqual({ name, sql });
  });

  it('returns undefined for an unknown step', () => {
    expect(findStep(spec, 'nope')).toBeUndefined();
  });

  it('lists steps no permutation uses', () => {
    expect(unusedSteps(spec)).toEqual(['s2unused']);
    expect(unusedSteps(parseSpec('session s\nstep a { }'))).toEqual([]);
  });
});
