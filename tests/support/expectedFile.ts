/**
 * The one way tests compare output with an expected-output file: Vitest's `toMatchFileSnapshot`
 * (exact bytes), plus a `<name>.changed.<ext>` file beside the expected one whenever they
 * differ, so the new output can be reviewed (and diffed) as a file. A match removes a stale
 * changed file. `vitest -u` rewrites the expected file with what the test produced, so a test
 * may hand this only output that is allowed to become the expected file: for lesson traces that
 * is real PostgreSQL's (tests/lessons/lessons.test.ts, or `npm run expected -- LESSON`).
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { expect } from 'vitest';
import { changedPath } from './changedPath';

/** Asserts `actual` equals the file at `path`; on a difference writes the changed file first. */
export async function expectFile(actual: string, path: string): Promise<void> {
  const same = existsSync(path) && readFileSync(path, 'utf8') === actual;
  if (same) rmSync(changedPath(path), { force: true });
  else writeFileSync(changedPath(path), actual);
  await expect(actual).toMatchFileSnapshot(path);
}
