import { beforeAll, describe, expect, it } from 'vitest';
import { loadChecker, syntaxProblem } from './sqlcheck';

describe('syntaxProblem (libpg-query)', () => {
  beforeAll(() => loadChecker());

  it('accepts valid multi-statement steps', () => {
    expect(syntaxProblem('BEGIN; UPDATE t SET v = v + 1 WHERE id = 1;')).toBeNull();
    expect(syntaxProblem('')).toBeNull();
  });

  it('reports the parser message with line and column', () => {
    expect(syntaxProblem('BEGIN; UPDAT t SET v = 1;')).toEqual({ message: 'syntax error at or near "UPDAT"', line: 1, column: 8 });
    expect(syntaxProblem('SELECT 1;\nSELEC 2')).toEqual({ message: 'syntax error at or near "SELEC"', line: 2, column: 1 });
    expect(syntaxProblem('SELECT (1')).toEqual({ message: 'syntax error at end of input', line: 1, column: 10 });
  });

  it('counts characters, not UTF-8 bytes, in the column', () => {
    expect(syntaxProblem("SELECT 'ééé' FRM x WHERE")).toMatchObject({ line: 1, column: 18 });
  });
});
