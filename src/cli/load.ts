/** Loads a scenario file for the CLI: an isolationtester .spec or a lesson (.yaml). */
import { readFileSync } from 'node:fs';
import { parseSpec } from '../scenario/spec';
import type { Spec } from '../scenario/types';

/** Reads FILE and returns its Spec; lesson files compile through the lesson format. */
export async function loadScenario(file: string): Promise<Spec> {
  const text = readFileSync(file, 'utf8');
  if (/\.ya?ml$/i.test(file)) {
    const { parseLesson, lessonToSpec } = await import('../scenario/lesson');
    return lessonToSpec(parseLesson(text));
  }
  return parseSpec(text);
}
