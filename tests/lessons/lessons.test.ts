/**
 * Every lesson is played on real PostgreSQL 18 and on the simulator: the traces must match, and
 * real PostgreSQL's isolationtester output must equal the lesson's shipped expected trace.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect } from 'vitest';
import { differentialSuite } from '../support/differential';

const lessons = new URL('../../lessons/', import.meta.url).pathname;

describe('lessons: simulator vs real PostgreSQL 18 vs shipped trace', () => {
  differentialSuite(lessons, /\.ya?ml$/, {
    minFiles: 4,
    onReal: (file, _traces, text) => {
      const expectedPath = lessons + file.replace(/\.ya?ml$/, '.expected.txt');
      expect(existsSync(expectedPath), `${file} ships no expected trace`).toBe(true);
      expect(text).toBe(readFileSync(expectedPath, 'utf8'));
    },
  });
});
