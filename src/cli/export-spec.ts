/**
 * Prints the isolationtester spec compiled from a lesson file.
 * Usage: npx tsx src/cli/export-spec.ts lessons/classic-deadlock.yaml
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { LessonError, lessonToSpec, parseLesson } from '../scenario/lesson';
import { writeSpec } from '../scenario/spec';

/** Reads, validates and compiles one lesson file; returns the spec text. */
export async function exportSpec(path: string): Promise<string> {
  const lesson = parseLesson(await readFile(path, 'utf8'));
  const expected = basename(path).replace(/\.ya?ml$/, '');
  if (lesson.id !== expected) throw new LessonError([{ path: 'id', message: `"${lesson.id}" must match the file name "${expected}"` }]);
  return writeSpec(lessonToSpec(lesson));
}

async function main(argv: string[]): Promise<number> {
  if (argv.length !== 1 || argv[0].startsWith('-')) {
    process.stderr.write('usage: export-spec <lesson.yaml>\n');
    return 2;
  }
  try {
    process.stdout.write(await exportSpec(argv[0]));
    return 0;
  } catch (e) {
    const where = argv[0];
    if (e instanceof LessonError) process.stderr.write(e.issues.map((i) => `${where}: ${formatIssueLine(i)}`).join('\n') + '\n');
    else process.stderr.write(`${where}: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}

function formatIssueLine(i: { path: string; message: string; line?: number }): string {
  return `${i.line ? `${i.line}: ` : ''}${i.path || '(root)'}: ${i.message}`;
}

if (process.argv[1] && import.meta.url.endsWith(basename(process.argv[1]))) {
  main(process.argv.slice(2)).then((code) => process.exit(code));
}
