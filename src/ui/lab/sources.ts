/**
 * Where a lab scenario can come from: the bundled templates (lessons/lab-templates/*.spec), the
 * bundled lessons, or a file's text (a .spec, a lesson YAML, or the lab's JSON). Errors keep the
 * parser's line and column.
 */
import { parseSpec, SpecParseError } from '../../scenario/spec';
import { LessonError, lessonToSpec, parseLesson, formatIssue, type Lesson } from '../../scenario/lesson';
import { specTitle, specToScenario, type LabScenario } from '../../scenario/labScenario';
import { ShareError } from '../../scenario/share';
import { scenarioFromJson } from './saved';

const templateFiles = import.meta.glob('/lessons/lab-templates/*.spec', { query: '?raw', import: 'default', eager: true }) as Record<
  string,
  string
>;

export interface Template {
  id: string;
  title: { en: string; ru: string };
  text: string;
}

/** The bundled templates, in file-name order. */
export const TEMPLATES: Template[] = Object.entries(templateFiles)
  .sort(([a], [b]) => a.localeCompare(b))
  .map(([path, text]) => ({
    id: path.replace(/^.*\//, '').replace(/\.spec$/, ''),
    title: { en: specTitle(text, 'en'), ru: specTitle(text, 'ru') },
    text,
  }));

/** What an import produced: the scenario, and what could not be kept. */
export interface Imported {
  scenario: LabScenario;
  format: 'spec' | 'lesson' | 'json';
  droppedPermutations: number;
}

/** An import problem with its position when the parser gave one. */
export class ImportError extends Error {
  constructor(
    readonly format: Imported['format'],
    message: string,
    readonly line?: number,
    readonly column?: number,
  ) {
    super(message);
    this.name = 'ImportError';
  }
}

/** A lesson as a lab scenario (its one permutation becomes the order). */
export function lessonToScenario(lesson: Lesson, lang: 'en' | 'ru'): Imported {
  const { scenario, droppedPermutations } = specToScenario(lessonToSpec(lesson), lesson.title[lang]);
  return { scenario, format: 'lesson', droppedPermutations };
}

/** Guesses the format from the name and content, then parses. */
export function importText(text: string, fileName = '', lang: 'en' | 'ru' = 'en'): Imported {
  const name = fileName.toLowerCase();
  const trimmed = text.trimStart();
  if (name.endsWith('.json') || (!name && trimmed.startsWith('{'))) {
    try {
      return { scenario: scenarioFromJson(JSON.parse(text)), format: 'json', droppedPermutations: 0 };
    } catch (e) {
      throw new ImportError('json', e instanceof ShareError ? e.detail : e instanceof Error ? e.message : String(e));
    }
  }
  if (name.endsWith('.yaml') || name.endsWith('.yml') || (!name.endsWith('.spec') && /^(id|title|steps|sessions)\s*:/m.test(text))) {
    try {
      return lessonToScenario(parseLesson(text), lang);
    } catch (e) {
      if (e instanceof LessonError) throw new ImportError('lesson', e.issues.map(formatIssue).join('\n'), e.issues[0]?.line);
      throw new ImportError('lesson', e instanceof Error ? e.message : String(e));
    }
  }
  try {
    const { scenario, droppedPermutations } = specToScenario(parseSpec(text), specTitle(text, lang) || fileName.replace(/\.spec$/i, ''));
    return { scenario, format: 'spec', droppedPermutations };
  } catch (e) {
    if (e instanceof SpecParseError) throw new ImportError('spec', e.message.replace(/^line \d+: /, ''), e.line, e.column);
    throw new ImportError('spec', e instanceof Error ? e.message : String(e));
  }
}
