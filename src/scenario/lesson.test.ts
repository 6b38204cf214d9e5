import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { LessonError, lessonToSpec, parseInterview, parseLesson, parsePause, stepName, type LessonIssue } from './lesson';
import { parseSpec, writeSpec } from './spec';

const t = (en: string) => ({ en, ru: `ru: ${en}` });

/** Loosely typed YAML data: the validation cases build deliberately wrong documents. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = Record<string, any>;

/** A valid code snippet with id "retry". */
function snippet(): Loose {
  return { id: 'retry', language: 'go', title: t('Retry'), source: 'for {\n\tif err := run(); err == nil {\n\t\treturn\n\t}\n}\n' };
}

/** A small valid lesson as plain data; each case mutates a fresh copy. */
function base(): Loose {
  return {
    id: 'tiny',
    title: t('Tiny'),
    summary: t('A tiny lesson'),
    topics: ['deadlock'],
    level: 'beginner',
    minutes: 3,
    setup: 'CREATE TABLE t (id int PRIMARY KEY);\nINSERT INTO t VALUES (1), (2);',
    teardown: 'DROP TABLE t;',
    sessions: [{ name: 'A', setup: "SET deadlock_timeout = '1s';" }, { name: 'B' }],
    steps: [
      { session: 'A', sql: 'BEGIN; UPDATE t SET id = id WHERE id = 1;', narration: t('A locks row 1.') },
      { session: 'B', sql: 'BEGIN; UPDATE t SET id = id WHERE id = 2;', narration: t('B locks row 2.') },
      {
        predict: {
          question: t('What happens?'),
          choices: [
            { id: 'completes', label: t('It completes') },
            { id: 'waits', label: t('It waits for B') },
          ],
          answer: 'waits',
          explanation: t('B holds row 2.'),
        },
      },
      { session: 'A', sql: 'UPDATE t SET id = id WHERE id = 2;', narration: t('A waits.') },
      { pause: '1.5s', narration: t('Time passes.') },
      { session: 'B', sql: 'COMMIT;', narration: t('B commits.') },
      { session: 'A', sql: 'COMMIT;', narration: t('A commits.') },
    ],
  };
}

function issuesOf(text: string): LessonIssue[] {
  try {
    parseLesson(text);
  } catch (e) {
    if (e instanceof LessonError) return e.issues;
    throw e;
  }
  return [];
}

describe('parseLesson validation', () => {
  const cases: { name: string; edit: (l: Loose) => void; path: string; message: RegExp }[] = [
    { name: 'missing title', edit: (l) => delete l.title, path: 'title', message: /missing required field/ },
    { name: 'unknown top-level field', edit: (l) => (l.author = 'x'), path: 'author', message: /unknown field/ },
    { name: 'missing ru', edit: (l) => delete l.summary.ru, path: 'summary.ru', message: /missing required field/ },
    { name: 'empty en', edit: (l) => (l.title.en = '  '), path: 'title.en', message: /non-empty string/ },
    { name: 'bad id', edit: (l) => (l.id = 'Tiny_Lesson'), path: 'id', message: /kebab-case/ },
    { name: 'bad level', edit: (l) => (l.level = 'expert'), path: 'level', message: /beginner, intermediate, senior/ },
    { name: 'bad minutes', edit: (l) => (l.minutes = 2.5), path: 'minutes', message: /positive whole number/ },
    { name: 'no topics', edit: (l) => (l.topics = []), path: 'topics', message: /at least one topic/ },
    { name: 'one session', edit: (l) => l.sessions.pop(), path: 'sessions', message: /2 to 4 sessions, found 1/ },
    {
      name: 'duplicate session',
      edit: (l) => (l.sessions[1].name = 'a'),
      path: 'sessions[1].name',
      message: /duplicate session "a"/,
    },
    { name: 'reserved clock', edit: (l) => (l.sessions[1].name = 'Clock'), path: 'sessions[1].name', message: /reserved/ },
    { name: 'bad session name', edit: (l) => (l.sessions[1].name = 'B-2'), path: 'sessions[1].name', message: /letter followed/ },
    {
      name: 'unused session',
      edit: (l) => l.sessions.push({ name: 'C' }),
      path: 'sessions[2].name',
      message: /session "C" has no steps/,
    },
    {
      name: 'unknown session in step',
      edit: (l) => (l.steps[3].session = 'C'),
      path: 'steps[3].session',
      message: /unknown session "C" \(sessions: A, B\)/,
    },
    { name: 'missing sql', edit: (l) => delete l.steps[0].sql, path: 'steps[0].sql', message: /missing required field/ },
    { name: 'brace in sql', edit: (l) => (l.steps[0].sql = "SELECT '}';"), path: 'steps[0].sql', message: /"}"/ },
    {
      name: 'missing narration',
      edit: (l) => delete l.steps[1].narration,
      path: 'steps[1].narration',
      message: /missing required field/,
    },
    { name: 'typo in step', edit: (l) => (l.steps[1].naration = t('x')), path: 'steps[1].naration', message: /unknown field/ },
    { name: 'bad pause', edit: (l) => (l.steps[4].pause = '2 minutes'), path: 'steps[4].pause', message: /"2s"/ },
    { name: 'pause too long', edit: (l) => (l.steps[4].pause = '61s'), path: 'steps[4].pause', message: /at most 60s/ },
    {
      name: 'unknown answer',
      edit: (l) => (l.steps[2].predict.answer = 'fails'),
      path: 'steps[2].predict.answer',
      message: /unknown choice "fails" \(choices: completes, waits\)/,
    },
    {
      name: 'duplicate choice',
      edit: (l) => (l.steps[2].predict.choices[1].id = 'completes'),
      path: 'steps[2].predict.choices[1].id',
      message: /duplicate choice/,
    },
    {
      name: 'one choice',
      edit: (l) => l.steps[2].predict.choices.pop(),
      path: 'steps[2].predict.choices',
      message: /at least 2 choices/,
    },
    {
      name: 'predict at the end',
      edit: (l) => l.steps.push(structuredClone(l.steps[2])),
      path: 'steps[7]',
      message: /followed by a step/,
    },
    { name: 'item of unknown kind', edit: (l) => (l.steps[0] = 'BEGIN;'), path: 'steps[0]', message: /a step .* a pause or a predict/ },
    {
      name: 'code ref without code list',
      edit: (l) => (l.steps[0].code = 'retry'),
      path: 'steps[0].code',
      message: /unknown code snippet "retry" \(the lesson has no "code" list\)/,
    },
    {
      name: 'unknown code ref',
      edit: (l) => {
        l.code = [snippet()];
        l.steps[4].code = 'nope';
      },
      path: 'steps[4].code',
      message: /unknown code snippet "nope" \(retry\)/,
    },
    { name: 'empty code list', edit: (l) => (l.code = []), path: 'code', message: /at least one snippet/ },
    {
      name: 'bad code language',
      edit: (l) => (l.code = [{ ...snippet(), language: 'python' }]),
      path: 'code[0].language',
      message: /go, sql, ts/,
    },
    {
      name: 'code missing source',
      edit: (l) => (l.code = [{ ...snippet(), source: undefined }]),
      path: 'code[0].source',
      message: /missing required field/,
    },
    { name: 'code bad id', edit: (l) => (l.code = [{ ...snippet(), id: 'With Retry' }]), path: 'code[0].id', message: /kebab-case/ },
    { name: 'code unknown field', edit: (l) => (l.code = [{ ...snippet(), lang: 'go' }]), path: 'code[0].lang', message: /unknown field/ },
    {
      name: 'duplicate snippet',
      edit: (l) => (l.code = [snippet(), snippet()]),
      path: 'code[1].id',
      message: /duplicate snippet "retry"/,
    },
    {
      name: 'code title needs both languages',
      edit: (l) => (l.code = [{ ...snippet(), title: { en: 'x' } }]),
      path: 'code[0].title.ru',
      message: /missing required field/,
    },
    { name: 'code on a predict', edit: (l) => (l.steps[2].code = 'retry'), path: 'steps[2].code', message: /unknown field/ },
  ];

  it('accepts the base lesson', () => {
    expect(issuesOf(stringify(base()))).toEqual([]);
  });

  for (const c of cases) {
    it(c.name, () => {
      const lesson = base();
      c.edit(lesson);
      const issues = issuesOf(stringify(lesson));
      const hit = issues.find((i) => i.path === c.path);
      expect(hit, JSON.stringify(issues)).toBeDefined();
      expect(hit!.message).toMatch(c.message);
    });
  }

  it('reports YAML syntax errors with a line', () => {
    const issues = issuesOf('id: x\ntitle: [unclosed\n');
    expect(issues[0].message).toMatch(/^YAML syntax/);
    expect(issues[0].line).toBeGreaterThan(0);
  });

  it('gives the line of the offending node and a readable message', () => {
    const lesson = base();
    lesson.steps[3].session = 'C';
    const text = stringify(lesson);
    const line = text.split('\n').findIndex((l) => l.includes('session: C')) + 1;
    try {
      parseLesson(text);
      expect.unreachable();
    } catch (e) {
      const err = e as LessonError;
      expect(err.issues[0].line).toBe(line);
      expect(err.message).toContain(`steps[3].session (line ${line}): unknown session "C"`);
    }
  });

  it('collects several issues at once', () => {
    const lesson = base();
    delete lesson.title;
    lesson.level = 'x';
    expect(issuesOf(stringify(lesson)).map((i) => i.path)).toEqual(['title', 'level']);
  });
});

describe('helpers', () => {
  it.each([
    ['2s', 2000],
    ['1.5s', 1500],
    ['500ms', 500],
    ['0.25 s', 250],
    ['2', undefined],
    ['2m', undefined],
  ])('parsePause(%s) = %s', (text, ms) => expect(parsePause(text)).toBe(ms));

  it.each([
    ['A', 1, 'a1'],
    ['B', 12, 'b12'],
    ['W1', 2, 'w1_2'],
    ['clock', 3, 'clock3'],
  ])('stepName(%s, %s) = %s', (s, n, name) => expect(stepName(s, n)).toBe(name));
});

describe('lessonToSpec', () => {
  it('compiles sessions, pauses and one permutation in item order', () => {
    const input = base();
    const lesson = parseLesson(stringify(input));
    const frozen = structuredClone(lesson);
    const spec = lessonToSpec(lesson);
    expect(lesson).toEqual(frozen);
    expect(spec).toEqual({
      setup: ['CREATE TABLE t (id int PRIMARY KEY);\nINSERT INTO t VALUES (1), (2);'],
      teardown: 'DROP TABLE t;',
      sessions: [
        {
          name: 'A',
          setup: "SET deadlock_timeout = '1s';",
          steps: [
            { name: 'a1', sql: 'BEGIN; UPDATE t SET id = id WHERE id = 1;' },
            { name: 'a2', sql: 'UPDATE t SET id = id WHERE id = 2;' },
            { name: 'a3', sql: 'COMMIT;' },
          ],
        },
        {
          name: 'B',
          steps: [
            { name: 'b1', sql: 'BEGIN; UPDATE t SET id = id WHERE id = 2;' },
            { name: 'b2', sql: 'COMMIT;' },
          ],
        },
        { name: 'clock', steps: [{ name: 'clock1', sql: 'SELECT pg_sleep(1.5);' }] },
      ],
      permutations: [{ steps: ['a1', 'b1', 'a2', 'clock1', 'b2', 'a3'].map((step) => ({ step, blockers: [] })) }],
    });
    const predict = lesson.steps.find((s) => s.kind === 'predict');
    expect(predict && predict.kind === 'predict' && predict.step).toBe('a2');
  });

  it('adds no clock session without pauses', () => {
    const input = base();
    input.steps.splice(4, 1);
    const spec = lessonToSpec(parseLesson(stringify(input)));
    expect(spec.sessions.map((s) => s.name)).toEqual(['A', 'B']);
  });
});

describe('code snippets', () => {
  it('are optional and absent from lessons without them', () => {
    const lesson = parseLesson(stringify(base()));
    expect(lesson.code).toBeUndefined();
    expect(lesson.steps.every((s) => !('code' in s))).toBe(true);
  });

  it('parse with their references on steps and pauses, and compile to nothing', () => {
    const input = base();
    input.code = [snippet(), { id: 'schema', language: 'sql', title: t('Schema'), source: 'CREATE TABLE t (id int); -- }' }];
    input.steps[0].code = 'schema';
    input.steps[4].code = 'retry';
    const lesson = parseLesson(stringify(input));
    expect(lesson.code).toEqual([
      { id: 'retry', language: 'go', title: t('Retry'), source: 'for {\n\tif err := run(); err == nil {\n\t\treturn\n\t}\n}' },
      { id: 'schema', language: 'sql', title: t('Schema'), source: 'CREATE TABLE t (id int); -- }' },
    ]);
    expect(lesson.steps[0]).toMatchObject({ kind: 'step', name: 'a1', code: 'schema' });
    expect(lesson.steps[4]).toMatchObject({ kind: 'pause', name: 'clock1', code: 'retry' });
    const plain = base();
    expect(lessonToSpec(lesson)).toEqual(lessonToSpec(parseLesson(stringify(plain))));
  });

  it('keep indentation from a YAML literal block', () => {
    const text = stringify(base()).replace(
      /^steps:/m,
      'code:\n  - id: go\n    language: go\n    title: { en: Go, ru: Go }\n    source: |\n      func f() {\n      \treturn\n      }\nsteps:',
    );
    expect(parseLesson(text).code?.[0].source).toBe('func f() {\n\treturn\n}');
  });
});

/** A small valid interview file as plain data. */
function interview(): Loose {
  return {
    title: t('Interview'),
    intro: t('Nine questions.'),
    questions: [
      {
        id: 'what-is-deadlock',
        question: t('What is a deadlock?'),
        choices: [
          { id: 'cycle', label: t('A cycle of waits') },
          { id: 'wait', label: t('A long wait') },
        ],
        answer: 'cycle',
        model: t('A cycle of waits that cannot end by itself.'),
        lesson: 'tiny',
        see: ['other'],
      },
      { id: 'free', question: t('Explain lock_timeout.'), model: t('It limits any single lock wait.'), lesson: 'other' },
    ],
    topics: [{ title: t('Matrices'), lessons: ['tiny', 'other'] }],
  };
}

function interviewIssues(data: Loose, ids?: string[]): LessonIssue[] {
  try {
    parseInterview(stringify(data), ids);
  } catch (e) {
    if (e instanceof LessonError) return e.issues;
    throw e;
  }
  return [];
}

describe('parseInterview', () => {
  it('parses quiz and free-answer questions and topics', () => {
    const iv = parseInterview(stringify(interview()), ['tiny', 'other']);
    expect(iv.title).toEqual(t('Interview'));
    expect(iv.questions).toHaveLength(2);
    expect(iv.questions[0]).toMatchObject({ id: 'what-is-deadlock', answer: 'cycle', lesson: 'tiny', see: ['other'] });
    expect(iv.questions[0].choices?.map((c) => c.id)).toEqual(['cycle', 'wait']);
    expect(iv.questions[1]).toEqual({
      id: 'free',
      question: t('Explain lock_timeout.'),
      model: t('It limits any single lock wait.'),
      lesson: 'other',
      see: [],
      followups: [],
    });
    expect(iv.topics).toEqual([{ title: t('Matrices'), lessons: ['tiny', 'other'] }]);
    expect(iv.pages).toEqual([]);
  });

  it('parses follow-ups and senior topic pages, and rejects a duplicate follow-up id', () => {
    const v = interview();
    v.questions[0].followups = [
      { id: 'f1', question: t('Why?'), model: t('Because.') },
      { id: 'f2', question: t('And then?'), model: t('Then this.') },
    ];
    v.pages = [{ id: 'broker', title: t('Queue vs broker'), body: t('One.\n\nTwo.'), lessons: ['tiny'] }];
    const iv = parseInterview(stringify(v), ['tiny', 'other']);
    expect(iv.questions[0].followups.map((f) => f.id)).toEqual(['f1', 'f2']);
    expect(iv.pages).toEqual([{ id: 'broker', title: t('Queue vs broker'), body: t('One.\n\nTwo.'), lessons: ['tiny'] }]);
    v.questions[1].followups = [{ id: 'f1', question: t('Again?'), model: t('No.') }];
    expect(() => parseInterview(stringify(v), ['tiny', 'other'])).toThrow(/duplicate follow-up "f1"/);
  });

  const cases: { name: string; edit: (v: Loose) => void; path: string; message: RegExp; ids?: string[] }[] = [
    { name: 'missing title', edit: (v) => delete v.title, path: 'title', message: /missing required field/ },
    { name: 'unknown field', edit: (v) => (v.lessons = []), path: 'lessons', message: /unknown field/ },
    { name: 'no questions', edit: (v) => (v.questions = []), path: 'questions', message: /at least one question/ },
    { name: 'missing model', edit: (v) => delete v.questions[0].model, path: 'questions[0].model', message: /missing required field/ },
    {
      name: 'missing ru',
      edit: (v) => delete v.questions[1].question.ru,
      path: 'questions[1].question.ru',
      message: /missing required field/,
    },
    { name: 'duplicate id', edit: (v) => (v.questions[1].id = 'what-is-deadlock'), path: 'questions[1].id', message: /duplicate question/ },
    { name: 'bad answer', edit: (v) => (v.questions[0].answer = 'nope'), path: 'questions[0].answer', message: /unknown choice "nope"/ },
    { name: 'choices without answer', edit: (v) => delete v.questions[0].answer, path: 'questions[0].answer', message: /right choice id/ },
    { name: 'answer without choices', edit: (v) => (v.questions[1].answer = 'x'), path: 'questions[1].answer', message: /free answer/ },
    { name: 'one choice', edit: (v) => v.questions[0].choices.pop(), path: 'questions[0].choices', message: /at least 2 choices/ },
    {
      name: 'unknown lesson',
      edit: (v) => (v.questions[1].lesson = 'ghost'),
      path: 'questions[1].lesson',
      message: /unknown lesson "ghost"/,
      ids: ['tiny', 'other'],
    },
    {
      name: 'unknown see',
      edit: (v) => (v.questions[0].see = ['ghost']),
      path: 'questions[0].see[0]',
      message: /unknown lesson/,
      ids: ['tiny', 'other'],
    },
    { name: 'topic without lessons', edit: (v) => (v.topics[0].lessons = []), path: 'topics[0].lessons', message: /at least one lesson/ },
    {
      name: 'topic unknown lesson',
      edit: (v) => v.topics[0].lessons.push('ghost'),
      path: 'topics[0].lessons[2]',
      message: /unknown lesson/,
      ids: ['tiny', 'other'],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const v = interview();
      c.edit(v);
      const issues = interviewIssues(v, c.ids);
      const hit = issues.find((i) => i.path === c.path);
      expect(hit, JSON.stringify(issues)).toBeDefined();
      expect(hit!.message).toMatch(c.message);
    });
  }

  it('does not check lesson ids when no list is given', () => {
    const v = interview();
    v.questions[1].lesson = 'ghost';
    expect(interviewIssues(v)).toEqual([]);
  });
});

describe('lessons/', () => {
  const dir = join(__dirname, '..', '..', 'lessons');
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));

  it('has lessons', () => expect(files.length).toBeGreaterThan(0));

  for (const file of files) {
    it(`${file} parses, compiles and round-trips through the spec writer`, () => {
      const lesson = parseLesson(readFileSync(join(dir, file), 'utf8'));
      expect(lesson.id).toBe(file.replace(/\.yaml$/, ''));
      expect(lesson.steps.some((s) => s.kind === 'predict')).toBe(true);
      const spec = lessonToSpec(lesson);
      expect(spec.permutations).toHaveLength(1);
      expect(parseSpec(writeSpec(spec))).toEqual(spec);
    });
  }

  it('interview/interview.yaml parses: nine questions, every lesson id exists', () => {
    const ids = files.map((f) => f.replace(/\.yaml$/, ''));
    const iv = parseInterview(readFileSync(join(dir, 'interview', 'interview.yaml'), 'utf8'), ids);
    expect(iv.questions).toHaveLength(9);
    expect(iv.topics.length).toBeGreaterThanOrEqual(9);
    for (const q of iv.questions) expect(q.lesson).toBeTruthy();
  });

  it('every lesson with code snippets references each snippet from some step', () => {
    for (const file of files) {
      const lesson = parseLesson(readFileSync(join(dir, file), 'utf8'));
      for (const snip of lesson.code ?? []) {
        expect(
          lesson.steps.some((s) => s.kind !== 'predict' && s.code === snip.id),
          `${file}: ${snip.id} unused`,
        ).toBe(true);
      }
    }
  });
});
