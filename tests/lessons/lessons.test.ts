/**
 * Every lesson is played on real PostgreSQL 18 and on the simulator: the traces must match, and
 * real PostgreSQL's isolationtester output must equal the lesson's shipped expected trace
 * (a difference leaves lessons/<id>.changed.txt for review). Only real PostgreSQL's output is
 * compared with the file, so `vitest -u` here, like `npm run expected -- LESSON`, regenerates
 * traces from a real server and never from the simulator.
 */
import { existsSync } from 'node:fs';
import { describe, expect } from 'vitest';
import { differentialSuite } from '../support/differential';
import { expectFile } from '../support/expectedFile';

const lessons = new URL('../../lessons/', import.meta.url).pathname;

describe('lessons: simulator vs real PostgreSQL 18 vs shipped trace', () => {
  differentialSuite(lessons, /\.ya?ml$/, {
    minFiles: 4,
    onReal: async (file, _traces, text) => {
      const expectedPath = lessons + file.replace(/\.ya?ml$/, '.expected.txt');
      expect(existsSync(expectedPath), `${file} ships no expected trace`).toBe(true);
      await expectFile(text, expectedPath);
    },
  });
});
