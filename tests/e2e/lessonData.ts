/** Lesson sources for the e2e flows, read from disk so assertions follow the lessons, not hard-coded copies. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ROOT } from './browser';
import { assert, norm, type PredictPolicy } from './harness';

export const LESSONS = join(ROOT, 'lessons');

// ---------------------------------------------------------------------------------------------
// Lesson sources (read from disk, so the assertions follow the lessons, not hard-coded copies)

export interface PredictYaml {
  question: { en: string; ru: string };
  choices: { id: string; label: { en: string; ru: string } }[];
  answer: string;
  explanation: { en: string; ru: string };
}

export interface LessonYaml {
  id: string;
  title: { en: string; ru: string };
  summary: { en: string; ru: string };
  steps: { session?: string; sql?: string; pause?: string; predict?: PredictYaml; narration?: { en: string; ru: string } }[];
}

export function lessonYaml(id: string): LessonYaml {
  return parseYaml(readFileSync(join(LESSONS, `${id}.yaml`), 'utf8')) as LessonYaml;
}

/** Script items as the player counts them (predict items are not steps). */
export function scriptItems(id: string) {
  return lessonYaml(id).steps.filter((s) => !s.predict);
}

/** The lesson's predict checkpoints in order (each is asked before the item that follows it). */
export function predicts(id: string): PredictYaml[] {
  return lessonYaml(id).steps.flatMap((s) => (s.predict ? [s.predict] : []));
}

/** A predict policy that gives the lesson's right answer, recognising each checkpoint by its question in `lang`. */
export function rightAnswers(id: string, lang: 'en' | 'ru' = 'en'): Exclude<PredictPolicy, string> {
  const checkpoints = predicts(id);
  return (_key, question) => {
    const p = checkpoints.find((x) => norm(x.question[lang]) === question);
    assert(p, `predict question "${question}" is not the ${lang} text of one of the lesson's checkpoints`);
    return p.answer;
  };
}

export interface ExpectedStep {
  name: string;
  sql: string;
  /** Result rows (cells trimmed) of every table the step printed. */
  rows: string[][];
  errors: string[];
}

/** Parses an isolation-tester `.expected.txt` (what real PostgreSQL printed) into steps. */
export function expectedSteps(id: string): ExpectedStep[] {
  const lines = readFileSync(join(LESSONS, `${id}.expected.txt`), 'utf8').split('\n');
  const out: ExpectedStep[] = [];
  let cur: ExpectedStep | null = null;
  let inTable = false;
  for (const line of lines) {
    const m = /^step (\S+): (.*)$/.exec(line);
    if (m) {
      cur = { name: m[1], sql: m[2], rows: [], errors: [] };
      out.push(cur);
      inTable = false;
      continue;
    }
    if (!cur) continue;
    if (/^-+(\+-+)*$/.test(line)) inTable = true;
    else if (/^\(\d+ rows?\)$/.test(line)) inTable = false;
    else if (inTable) cur.rows.push(line.split('|').map((c) => c.trim()));
    else if (line.startsWith('ERROR:')) cur.errors.push(line);
  }
  return out;
}

export const lessonIds = () =>
  readdirSync(LESSONS)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => f.replace(/\.yaml$/, ''))
    .sort();
