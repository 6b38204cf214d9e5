import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSpec, writeSpec } from './spec';
import { parseLesson, lessonToSpec } from './lesson';
import {
  blankScenario,
  checkOrder,
  scenarioIssues,
  scenarioToLessonYaml,
  scenarioToSpec,
  scenarioToSpecText,
  specTitle,
  specToScenario,
  type LabScenario,
} from './labScenario';

const root = join(__dirname, '..', '..');
const conformance = readdirSync(join(root, 'tests', 'conformance')).filter((f) => f.endsWith('.spec'));
const templates = readdirSync(join(root, 'lessons', 'lab-templates')).filter((f) => f.endsWith('.spec'));

const withOrder = (order: string): LabScenario => ({ ...blankScenario(), order });

describe('scenario ↔ spec', () => {
  it.each([...conformance.map((f) => `tests/conformance/${f}`), ...templates.map((f) => `lessons/lab-templates/${f}`)])(
    '%s: the first permutation survives spec → scenario → spec → text → spec',
    (file) => {
      const spec = parseSpec(readFileSync(join(root, file), 'utf8'));
      const frozen = structuredClone(spec);
      const { scenario, droppedPermutations } = specToScenario(spec);
      expect(spec).toEqual(frozen);
      expect(droppedPermutations).toBe(Math.max(0, spec.permutations.length - 1));
      const back = scenarioToSpec(scenario);
      const expected = { ...spec, permutations: spec.permutations.slice(0, 1) };
      if (spec.permutations.length === 0) expected.permutations = back.permutations; // the order is every step in spec order
      expect(back).toEqual(expected);
      expect(parseSpec(scenarioToSpecText(scenario))).toEqual(back);
      expect(parseSpec(writeSpec(back))).toEqual(back);
    },
  );

  it('reads a template title per language', () => {
    const text = '# title.en: Two transfers\n# title.ru: Два перевода\n';
    expect(specTitle(text, 'ru')).toBe('Два перевода');
    expect(specTitle(text, 'en')).toBe('Two transfers');
    expect(specTitle('# plain comment\n')).toBe('plain comment');
  });
});

describe('scenarioIssues (validation as you type)', () => {
  it('accepts the blank scenario', () => {
    expect(scenarioIssues(blankScenario())).toEqual([]);
  });

  it.each<{ name: string; edit: (s: LabScenario) => void; expected: object[] }>([
    {
      name: 'empty step',
      edit: (s) => (s.sessions[1].steps[0].sql = '  \n'),
      expected: [{ at: { kind: 'step', session: 1, step: 0, field: 'sql' }, code: 'empty-sql' }],
    },
    {
      name: 'brace in SQL',
      edit: (s) => (s.sessions[0].steps[0].sql = "SELECT '}';"),
      expected: [{ at: { kind: 'step', session: 0, step: 0, field: 'sql' }, code: 'sql-brace' }],
    },
    {
      name: 'unknown step in the order',
      edit: (s) => (s.order = 's1a nope s2a'),
      expected: [{ at: { kind: 'order', column: 5 }, code: 'order', detail: 'unknown step "nope" in permutation' }],
    },
    { name: 'empty order', edit: (s) => (s.order = ' '), expected: [{ at: { kind: 'order' }, code: 'empty-order' }] },
    {
      name: 'duplicate step',
      edit: (s) => (s.sessions[1].steps[0].name = 's1a'),
      expected: [{ at: { kind: 'step', session: 1, step: 0, field: 'name' }, code: 'duplicate-step', detail: 's1a' }],
    },
    {
      name: 'duplicate session',
      edit: (s) => (s.sessions[1].name = 's1'),
      expected: [{ at: { kind: 'session', session: 1, field: 'name' }, code: 'duplicate-session', detail: 's1' }],
    },
    {
      name: 'one session',
      edit: (s) => s.sessions.pop(),
      expected: [
        { at: { kind: 'scenario' }, code: 'too-few-sessions' },
        { at: { kind: 'order', column: 5 }, code: 'order', detail: 'unknown step "s2a" in permutation' },
      ],
    },
    {
      name: 'more than 200 steps',
      edit: (s) => {
        for (let i = 0; i < 199; i++) s.sessions[i % 2].steps.push({ name: `x${i}`, sql: 'SELECT 1;' });
      },
      expected: [{ at: { kind: 'scenario' }, code: 'too-many-steps', detail: '201' }],
    },
    {
      name: 'blocker on own session',
      edit: (s) => {
        s.sessions[0].steps.push({ name: 's1b', sql: 'COMMIT;' });
        s.order = 's1a s1b(s1a)';
      },
      expected: [
        { at: { kind: 'order', column: 9 }, code: 'order', detail: 'step "s1b" cannot block on step "s1a" of its own session "s1"' },
      ],
    },
  ])('$name', ({ edit, expected }) => {
    const sc = blankScenario();
    edit(sc);
    expect(scenarioIssues(sc)).toEqual(expected);
  });

  it('parses markers in the order', () => {
    expect(checkOrder(withOrder('s1a s2a(*)')).permutation).toEqual({
      steps: [
        { step: 's1a', blockers: [] },
        { step: 's2a', blockers: [{ kind: 'star' }] },
      ],
    });
  });
});

describe('lesson export', () => {
  it('writes a lesson draft that the lesson parser accepts and compiles to the same steps', () => {
    const sc = specToScenario(parseSpec(readFileSync(join(root, 'lessons', 'lab-templates', 'transfer-unordered.spec'), 'utf8'))).scenario;
    sc.title = 'Transfers';
    const lesson = parseLesson(scenarioToLessonYaml(sc, 'transfers'));
    const spec = lessonToSpec(lesson);
    expect(spec.sessions.map((s) => s.name)).toEqual(['A', 'B']);
    expect(lesson.steps.filter((s) => s.kind === 'step').map((s) => (s as { sql: string }).sql)).toEqual(
      ['a1', 'b1', 'a2', 'b2', 'a3', 'b3'].map((n) => sc.sessions.flatMap((x) => x.steps).find((st) => st.name === n)!.sql),
    );
  });
});
