// Config for tests/ci/exit-code.test.ts only: the deliberately failing fixture, with the same
// global setup (an embedded PostgreSQL) as the real unit project.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/ci/failing.fixture.ts'],
    globalSetup: ['tests/setup/postgres.ts'],
    hookTimeout: 120_000,
  },
});
