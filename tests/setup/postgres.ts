/**
 * Vitest globalSetup: starts ONE real PostgreSQL 18 server for the whole test run and provides
 * its URL to tests as inject('pgUrl').
 */
import type { TestProject } from 'vitest/node';
import { startPostgres } from '../../src/oracle/server';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Connection URL of the shared real PostgreSQL server (database `postgres`). */
    pgUrl: string;
  }
}

/** Starts the server, provides 'pgUrl', and returns the teardown that stops it. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startPostgres();
  project.provide('pgUrl', server.url);
  return async () => server.stop();
}
