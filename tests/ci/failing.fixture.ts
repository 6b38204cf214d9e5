// A test that fails on purpose: tests/ci/exit-code.test.ts runs it in its own Vitest process.
import { expect, inject, it } from 'vitest';

it('fails on purpose (with the real PostgreSQL server of the global setup running)', () => {
  expect(inject('pgUrl')).toContain('postgres');
  expect('this run').toBe('a failure');
});
