/**
 * The only module that imports PGlite. It runs SQL on one PGlite instance through the
 * simple query protocol (so multi-statement text, command tags, notices and error fields
 * arrive exactly as PostgreSQL sends them) and captures what a statement locked.
 *
 * PGlite holds only committed data between engine operations: every session's open work
 * is replayed inside a transaction that is rolled back (a dry run), or committed for real.
 */
import { PGlite, protocol } from '@electric-sql/pglite';
import { pageinspect } from '@electric-sql/pglite/contrib/pageinspect';
import type { PgMessage, StatementResult } from '../../scenario/types';

/** The outcome of one simple-protocol query string. */
export interface RawResult {
  results: StatementResult[];
  error?: PgMessage;
  notices: PgMessage[];
}

/** A backend message as PGlite's protocol parser yields it. */
interface Msg {
  name: string;
  text?: string;
  fields?: unknown[];
  message?: string;
  severity?: string;
  code?: string;
  detail?: string;
  hint?: string;
  where?: string;
  position?: string;
}

function toPgMessage(m: Msg): PgMessage {
  const out: PgMessage = { severity: m.severity ?? 'ERROR', sqlstate: m.code ?? 'XX000', message: m.message ?? '' };
  if (m.detail) out.detail = m.detail;
  if (m.hint) out.hint = m.hint;
  if (m.where) out.context = m.where;
  if (m.position) out.position = Number(m.position);
  return out;
}

/** Schema holding pageinspect and the engine's helper objects; never on a user's search_path. */
export const INTERNAL_SCHEMA = 'lockstep';

/** Thin wrapper around one PGlite instance. */
export class PgliteExecutor {
  private constructor(private readonly db: PGlite) {}

  /** Starts PGlite with what the engine needs: prepared transactions and pageinspect. */
  static async create(): Promise<PgliteExecutor> {
    const db = await PGlite.create({
      extensions: { pageinspect },
      postgresqlconf: ['max_prepared_transactions = 16'],
    } as never);
    const ex = new PgliteExecutor(db);
    const r = await ex.run(
      `CREATE SCHEMA ${INTERNAL_SCHEMA}; CREATE EXTENSION pageinspect SCHEMA ${INTERNAL_SCHEMA};`,
    );
    if (r.error) throw new Error(`engine start-up failed: ${r.error.message}`);
    return ex;
  }

  /** Sends one simple Query message; never throws for SQL errors. */
  async run(sql: string): Promise<RawResult> {
    const raw = await this.db.execProtocolRaw(protocol.serialize.query(sql));
    const msgs: Msg[] = [];
    new protocol.Parser().parse(raw, (m: unknown) => msgs.push(m as Msg));
    const results: StatementResult[] = [];
    const notices: PgMessage[] = [];
    let error: PgMessage | undefined;
    let cur: { columns?: string[]; rows?: (string | null)[][] } = {};
    for (const m of msgs) {
      switch (m.name) {
        case 'rowDescription':
          cur = { columns: (m.fields as { name: string }[]).map((f) => f.name), rows: [] };
          break;
        case 'dataRow':
          cur.rows?.push(m.fields as (string | null)[]);
          break;
        case 'commandComplete':
          results.push({ command: m.text ?? '', ...cur });
          cur = {};
          break;
        case 'emptyQuery':
          cur = {};
          break;
        case 'notice':
          notices.push(toPgMessage(m));
          break;
        case 'error':
          error = toPgMessage(m);
          break;
      }
    }
    return error ? { results, error, notices } : { results, notices };
  }

  /** Runs SQL that must succeed (engine-internal); returns the rows of the last result. */
  async must(sql: string): Promise<(string | null)[][]> {
    const r = await this.run(sql);
    if (r.error) throw new EngineInternalError(`${r.error.message} [${r.error.sqlstate}] in: ${sql.slice(0, 400)}`);
    return r.results.at(-1)?.rows ?? [];
  }

  /** Closes the instance. */
  async close(): Promise<void> {
    await this.db.close();
  }
}

/** An engine bug or an impossible state: never a user's SQL error. */
export class EngineInternalError extends Error {}
