import { beforeAll, describe, expect, it } from 'vitest';
import { parseSync } from 'libpg-query';
import { loadParser, parseStatements } from './sql';
import { restrictSublink } from './sublink';

beforeAll(() => loadParser());

/** The part of the SQL between the subquery's parentheses and the rest around it. */
function split(sql: string, subStart: string): { outer: string; inner: string } {
  const at = sql.indexOf(subStart);
  let depth = 0;
  for (let i = at; i < sql.length; i++) {
    if (sql[i] === '(') depth++;
    else if (sql[i] === ')' && --depth === 0) return { outer: sql.slice(0, at) + sql.slice(i + 1), inner: sql.slice(at + 1, i) };
  }
  throw new Error('unbalanced');
}

describe('restrictSublink', () => {
  const ctids = ['(0,1)'];
  it.each([
    ['DELETE FROM jobs WHERE id = (SELECT id FROM jobs ORDER BY id FOR UPDATE LIMIT 1) RETURNING id', '(SELECT', 'jobs'],
    [
      'UPDATE jobs SET w = 1 WHERE status = 0 AND id IN (SELECT j.id FROM jobs j WHERE j.status = 0 ORDER BY id FOR UPDATE LIMIT 2)',
      '(SELECT',
      'j',
    ],
    ['DELETE FROM jobs WHERE id = ANY (SELECT id FROM jobs FOR NO KEY UPDATE)', '(SELECT', 'jobs'],
  ])('restricts only the subquery of %s', (sql, start, ref) => {
    const cls = parseStatements(sql)[0].cls;
    expect(cls.kind === 'dml' && cls.lockingSublink?.ref).toBe(ref);
    const out = restrictSublink(sql, ref, ctids, 42);
    expect(out).not.toBeNull();
    expect(() => parseSync(out!)).not.toThrow();
    const before = split(sql, start);
    const after = split(out!, start);
    // The outer statement is left as it is; the subquery gains the restriction before its ORDER BY / FOR.
    expect(after.outer).toBe(before.outer);
    expect(after.inner).toContain(`${ref}.ctid = ANY('{"(0,1)"}'::tid[])`);
    expect(after.inner).toContain(`${ref}.xmin::text::bigint < 42`);
    expect(after.inner.trimEnd().endsWith(before.inner.slice(before.inner.search(/ (ORDER|FOR) /)).trimEnd())).toBe(true);
  });

  it('finds no locking subquery where there is none', () => {
    const sql = 'DELETE FROM jobs WHERE id = (SELECT min(id) FROM jobs)';
    const cls = parseStatements(sql)[0].cls;
    expect(cls.kind === 'dml' && cls.lockingSublink).toBeFalsy();
    expect(restrictSublink(sql, 'jobs', ctids)).toBeNull();
  });
});
