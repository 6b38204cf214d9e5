/**
 * The explain page's whole pipeline, free of the UI: parse the paste, have the SQL parser read
 * each report's statements (through `read`, a Worker in the page), explain each report, rebuild it
 * as a lab scenario, and sum up what was and was not understood.
 */
import { explainReport, statementsToParse, type Explanation, type Gap, type StatementReading } from './explain';
import { parseLog, type ForeignDatabase, type ParsedLog } from './parse';
import { rebuildScenario, type Rebuild } from './rebuild';

/** What the page says above the results when something was not understood (worded by the UI). */
export type Notice =
  | { code: 'empty' }
  | { code: 'not-a-log'; lines: number }
  | { code: 'foreign'; db: ForeignDatabase; line: number }
  | { code: 'client-only'; line: number }
  | { code: 'cut-before-detail'; line: number }
  | { code: 'waits-only'; count: number }
  | { code: 'gap'; report: number; gap: Gap };

/** One report with its explanation and rebuild. */
export interface Explained {
  explanation: Explanation;
  rebuild: Rebuild;
}

/** Everything the page shows for a paste. */
export interface Analysis {
  log: ParsedLog;
  reports: Explained[];
  notices: Notice[];
}

/** Reads statements with PostgreSQL's parser, one reading per text. */
export type StatementReader = (sqls: string[]) => Promise<StatementReading[]>;

/** What was not understood, most important first. */
export function notices(log: ParsedLog, reports: readonly Explained[], blank: boolean): Notice[] {
  if (blank) return [{ code: 'empty' }];
  const out: Notice[] = [];
  reports.forEach((r, i) => {
    for (const gap of r.explanation.gaps) out.push({ code: 'gap', report: i, gap });
  });
  for (const b of log.bare)
    out.push(b.source === 'client' ? { code: 'client-only', line: b.line } : { code: 'cut-before-detail', line: b.line });
  if (!reports.length) {
    for (const f of log.foreign) out.push({ code: 'foreign', db: f.db, line: f.line });
    if (log.lockWaits.length) out.push({ code: 'waits-only', count: log.lockWaits.length });
    if (!out.length) out.push({ code: 'not-a-log', lines: log.lines });
  }
  return out;
}

/** The analysis of a paste. */
export async function analyze(text: string, read: StatementReader, title: (ex: Explanation) => string): Promise<Analysis> {
  const log = parseLog(text);
  const reports: Explained[] = [];
  for (const report of log.reports) {
    const toParse = statementsToParse(report);
    const readings = toParse.length ? await read(toParse.map((s) => s.sql)) : [];
    const explanation = explainReport(report, new Map(toParse.map((s, k) => [s.pid, readings[k]])));
    reports.push({ explanation, rebuild: rebuildScenario(explanation, title(explanation)) });
  }
  return { log, reports, notices: notices(log, reports, text.trim() === '') };
}
