/**
 * The conformance corpus: every spec here is played by the isolationtester algorithm on real
 * PostgreSQL 18 (embedded) and on the simulator; the traces must match event by event.
 */
import { describe } from 'vitest';
import { differentialSuite } from '../support/differential';

describe('conformance corpus: simulator vs real PostgreSQL 18', () => {
  differentialSuite(new URL('.', import.meta.url).pathname, /\.spec$/, { minFiles: 40 });
});
