/**
 * Classic isolation anomalies (dirty writes G0, aborted and intermediate reads G1a/G1b, circular
 * information flow G1c, observed transaction vanishes, predicate-many-preceders, lost update P4,
 * read skew G-single, write skew G2-item, anti-dependency cycles G2), each under READ COMMITTED,
 * REPEATABLE READ and SERIALIZABLE: played on real PostgreSQL 18 and on the simulator, traces
 * compared event by event (tests/support/differential.ts).
 */
import { describe } from 'vitest';
import { differentialSuite } from '../support/differential';

describe('isolation anomalies: simulator vs real PostgreSQL 18', () => {
  differentialSuite(new URL('.', import.meta.url).pathname, /\.spec$/, { minFiles: 39 });
});
