/**
 * The #/locks page's state (a runes class): the statement and schema typed, one request at a
 * time to the engine Worker through EngineClient (so the watchdog's countdown and restart apply),
 * and the report the page shows. The logic is in model/statementLocks.ts.
 */
import type { LocksEngine } from './engine';
import { SAMPLE_SCHEMA, firstLine, locksReport, type LocksReport } from '../model/statementLocks';

/** What the last run came to: a report, or the watchdog stopping it. */
export type LocksView =
  { kind: 'report'; report: LocksReport } | { kind: 'stopped'; limitMs: number; afterMs?: number } | { kind: 'crashed'; reason: string };

/** The page's state. */
export class LocksPage {
  sql = $state('ALTER TABLE accounts ADD COLUMN note text');
  schema = $state(SAMPLE_SCHEMA);
  busy = $state(false);
  view = $state<LocksView | null>(null);
  /** The lock line whose conflicts are lit. */
  selected = $state(0);

  constructor(private readonly engine: LocksEngine | null) {}

  /** Runs the statement; the answer replaces the last one. */
  async run(): Promise<void> {
    if (!this.engine || this.busy) return;
    this.busy = true;
    try {
      const out = await this.engine.locks(this.schema, this.sql);
      if (out.kind === 'answer') {
        const report = locksReport(out.answer);
        this.selected = report.kind === 'locks' ? firstLine(report.lines) : 0;
        this.view = { kind: 'report', report };
      } else if (out.kind === 'stopped')
        this.view = { kind: 'stopped', limitMs: out.limitMs, ...(out.afterMs !== undefined ? { afterMs: out.afterMs } : {}) };
      else this.view = { kind: 'crashed', reason: out.reason };
    } catch (e) {
      this.view = { kind: 'crashed', reason: e instanceof Error ? e.message : String(e) };
    } finally {
      this.busy = false;
    }
  }

  /** Stops the engine Worker. */
  dispose(): void {
    this.engine?.dispose();
  }
}
