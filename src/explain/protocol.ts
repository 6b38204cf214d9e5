/** Messages between the explain page and its parser Worker (src/worker/explain.worker.ts). */
import type { StatementReading } from './explain';

/** Statements to read. */
export interface ReadRequest {
  id: number;
  sqls: string[];
}

/** One reading per statement, in order. */
export interface ReadReply {
  id: number;
  readings: StatementReading[];
}
