/**
 * SessionDriver over real PostgreSQL: one `pg` Client per session plus a control connection,
 * as isolationtester has. Steps go out as simple-protocol Query messages (PQsendQuery), values
 * stay text, and a step is 'blocked' when pg_isolation_test_session_is_blocked says so.
 */
import { normalizeDetailText } from '../scenario/normalize';
import pg from 'pg';
import type { PgMessage, PollResult, SessionDriver, SetupOutput, Spec, StatementResult, StepResult } from '../scenario/types';

/** Text values, never parsed: rows hold exactly what PostgreSQL sent. */
const TEXT_TYPES = { getTypeParser: () => (v: string) => v };
/** isolationtester checks for lock waits every 10 ms. */
const POLL_MS = 10;

export interface PgDriverOptions {
  /** Cancel a step that has not completed after this long (isolationtester: 300 s). */
  maxStepWaitMs?: number;
}

/** Fields of a pg ErrorResponse/NoticeResponse message that we keep. */
interface WireMessage {
  severity?: string;
  code?: string;
  message?: string;
  detail?: string;
  hint?: string;
  where?: string;
  position?: string;
}

function toPgMessage(m: WireMessage): PgMessage {
  const out: PgMessage = { severity: m.severity ?? 'ERROR', sqlstate: m.code ?? '', message: m.message ?? '' };
  if (m.detail !== undefined) out.detail = m.detail;
  if (m.hint !== undefined) out.hint = m.hint;
  if (m.where !== undefined) out.context = m.where;
  if (m.position !== undefined) out.position = Number(m.position);
  return out;
}

/**
 * A pg "Submittable" that sends one simple Query and records every statement's CommandComplete
 * tag, columns and text rows. pg's own Query drops earlier results when a later statement fails.
 */
class StepQuery {
  readonly results: StatementResult[] = [];
  readonly notices: PgMessage[] = [];
  error?: PgMessage;
  finished = false;
  /** Notices already handed out by a 'blocked' poll. */
  noticesReported = 0;
  readonly done: Promise<void>;
  private resolve!: () => void;
  private columns?: string[];
  private rows: (string | null)[][] = [];

  constructor(readonly text: string) {
    this.done = new Promise((r) => (this.resolve = r));
  }
  submit(connection: { query(text: string): void }): null {
    connection.query(this.text);
    return null;
  }
  handleRowDescription(msg: { fields: { name: string }[] }): void {
    this.columns = msg.fields.map((f) => f.name);
    this.rows = [];
  }
  handleDataRow(msg: { fields: (string | null)[] }): void {
    this.rows.push(msg.fields.map((v) => (v === null ? null : String(v))));
  }
  handleCommandComplete(msg: { text: string }): void {
    const r: StatementResult = { command: msg.text };
    if (this.columns) {
      r.columns = this.columns;
      r.rows = this.rows;
    }
    this.results.push(r);
    this.columns = undefined;
    this.rows = [];
  }
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyInResponse(connection: { sendCopyFail(msg: string): void }): void {
    connection.sendCopyFail('COPY FROM STDIN is not supported by the oracle');
  }
  handleCopyData(): void {}
  handleError(err: WireMessage, connection?: { once(event: 'readyForQuery', f: () => void): void }): void {
    this.error = toPgMessage(err);
    // PostgreSQL sends the ErrorResponse before it aborts the transaction and releases its
    // locks; ReadyForQuery follows the release. libpq (and so isolationtester) reports the
    // step only then, and so does this driver: a step sent to another session right after the
    // error must not find the failed transaction's locks still held. pg's client hands the
    // ReadyForQuery to no query after an error, so it is read from the connection. A FATAL
    // error ends the connection instead.
    if (connection && this.error.severity !== 'FATAL' && this.error.severity !== 'PANIC')
      connection.once('readyForQuery', () => this.finish());
    else this.finish();
  }
  handleReadyForQuery(): void {
    this.finish();
  }
  result(): StepResult {
    const out: StepResult = { results: this.results, notices: this.notices };
    if (this.error) out.error = this.error;
    return out;
  }
  /** Marks the step done (also used for a connection that is already gone). */
  finish(): void {
    this.finished = true;
    this.resolve();
  }
}

interface Session {
  name: string;
  client: pg.Client;
  pid: number;
  running?: StepQuery;
  /** Notices received while no step runs (setup and teardown). */
  idleNotices: PgMessage[];
  /** The FATAL error that ended the connection (e.g. idle_in_transaction_session_timeout). */
  fatal?: PgMessage;
  /** The FATAL went to a command already: libpq then reports the closed connection itself. */
  fatalReported?: boolean;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Runs SQL as one simple Query on a client and returns what it produced (never throws on SQL errors). */
async function exec(client: pg.Client, sql: string): Promise<StepResult> {
  const q = new StepQuery(sql);
  const onNotice = (m: WireMessage): void => void q.notices.push(toPgMessage(m));
  client.on('notice', onNotice);
  try {
    client.query(q as unknown as pg.Submittable);
    await q.done;
  } finally {
    client.off('notice', onNotice);
  }
  return q.result();
}

/** A SessionDriver that plays steps on a real server at `url` (database `postgres`). */
export class PgDriver implements SessionDriver {
  private control?: pg.Client;
  private sessions = new Map<string, Session>();
  private pidNames = new Map<number, string>();
  private relNames = new Map<string, string>();
  private readonly maxStepWaitMs: number;

  constructor(
    private readonly url: string,
    options: PgDriverOptions = {},
  ) {
    this.maxStepWaitMs = options.maxStepWaitMs ?? 300_000;
  }

  private async connect(applicationName: string): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.url,
      application_name: applicationName,
      types: TEXT_TYPES,
    } as pg.ClientConfig);
    client.on('error', () => {}); // a terminated backend must not crash the process
    await client.connect();
    return client;
  }

  private async controlClient(): Promise<pg.Client> {
    this.control ??= await this.connect('control connection');
    return this.control;
  }

  /** Resets the database, opens one connection per session, then runs setup like isolationtester. */
  async begin(spec: Spec): Promise<SetupOutput[]> {
    await this.closeSessions();
    const control = await this.controlClient();
    await this.resetDatabase(control);
    const sessions = await Promise.all(
      spec.sessions.map(async (s): Promise<Session> => {
        const client = await this.connect(s.name);
        const pid = (client as unknown as { processID: number }).processID;
        const session: Session = { name: s.name, client, pid, idleNotices: [] };
        client.on('error', (e: WireMessage) => {
          if (e.severity === 'FATAL' && e.code) session.fatal = toPgMessage(e);
        });
        client.on('notice', (m: WireMessage) => {
          const target = session.running ? session.running.notices : session.idleNotices;
          target.push(toPgMessage(m));
        });
        return session;
      }),
    );
    this.relNames.clear();
    this.pidNames = new Map(sessions.map((s) => [s.pid, s.name]));
    for (const s of sessions) this.sessions.set(s.name, s);

    const outputs: SetupOutput[] = [];
    for (const sql of spec.setup) {
      const result = await exec(control, sql);
      if (result.error) throw new Error(`setup failed: ${result.error.severity}:  ${result.error.message}`);
      outputs.push({ result: { ...result, notices: [] } });
    }
    for (const s of spec.sessions) {
      if (s.setup === undefined) continue;
      const result = await this.execIdle(this.sessions.get(s.name)!, s.setup);
      if (result.error) throw new Error(`setup of session ${s.name} failed: ${result.error.severity}:  ${result.error.message}`);
      outputs.push({ session: s.name, result });
    }
    return outputs;
  }

  /** Runs SQL on an idle session, attributing its notices to it. */
  private async execIdle(session: Session, sql: string): Promise<StepResult> {
    session.idleNotices = [];
    const q = new StepQuery(sql);
    session.running = q;
    try {
      session.client.query(q as unknown as pg.Submittable);
      await q.done;
    } finally {
      session.running = undefined;
    }
    return q.result();
  }

  /**
   * A clean `postgres` database: prepared transactions rolled back (they hold locks) and schema
   * public dropped and recreated with PostgreSQL 15+'s default owner and privileges.
   * Roles, other schemas and other databases are not touched.
   */
  private async resetDatabase(control: pg.Client): Promise<void> {
    const prepared = await control.query<{ gid: string }>(
      'SELECT gid FROM pg_catalog.pg_prepared_xacts WHERE database = current_database()',
    );
    for (const { gid } of prepared.rows) {
      await control.query(`ROLLBACK PREPARED ${pg.escapeLiteral(gid)}`);
    }
    await control.query(
      'DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public AUTHORIZATION pg_database_owner; ' +
        'GRANT USAGE ON SCHEMA public TO PUBLIC;',
    );
  }

  private session(name: string): Session {
    const s = this.sessions.get(name);
    if (!s) throw new Error(`unknown session ${name}`);
    return s;
  }

  /** PQsendQuery: queues the step's SQL and returns at once. */
  async send(session: string, sql: string): Promise<void> {
    const s = this.session(session);
    if (s.running) throw new Error(`session ${session} is busy`);
    const q = new StepQuery(sql);
    s.running = q;
    if (s.fatal) {
      // The server ended this connection with a FATAL error; libpq reports that error for the
      // next command (the client library's own "not queryable" text is not PostgreSQL's).
      // Once read, the connection is closed: PQsendQuery fails with libpq's "no connection to the server".
      q.error = s.fatalReported ? { severity: '', sqlstate: '', message: 'no connection to the server' } : s.fatal;
      s.fatalReported = true;
      q.finish();
      return;
    }
    s.client.query(q as unknown as pg.Submittable);
  }

  /** try_complete_step's wait loop: every 10 ms, check for completion, then (nonblocking) for a lock wait. */
  async poll(session: string, wait: boolean): Promise<PollResult> {
    const s = this.session(session);
    const q = s.running;
    if (!q) throw new Error(`session ${session} has no running step`);
    const start = Date.now();
    let canceled = false;
    for (;;) {
      if (!q.finished) await Promise.race([q.done, sleep(POLL_MS)]);
      if (q.finished) return this.complete(s, q);
      if (!wait && (await this.isBlocked(s.pid))) {
        // Data may have arrived while the check ran (PQconsumeInput + PQisBusy in isolationtester).
        if (q.finished) return this.complete(s, q);
        const notices = q.notices.slice(q.noticesReported);
        q.noticesReported = q.notices.length;
        return { status: 'blocked', notices };
      }
      if (!canceled && Date.now() - start > this.maxStepWaitMs) {
        canceled = true;
        await (await this.controlClient()).query('SELECT pg_catalog.pg_cancel_backend($1)', [s.pid]);
      }
    }
  }

  private async complete(s: Session, q: StepQuery): Promise<PollResult> {
    s.running = undefined;
    if (q.error?.detail) await this.learnRelations(q.error.detail);
    return { status: 'done', result: q.result() };
  }

  private async isBlocked(pid: number): Promise<boolean> {
    const pids = [...this.pidNames.keys()].join(',');
    const res = await (
      await this.controlClient()
    ).query<{ blocked: string }>(`SELECT pg_catalog.pg_isolation_test_session_is_blocked($1, '{${pids}}') AS blocked`, [pid]);
    return res.rows[0]?.blocked === 't';
  }

  /** Looks up the names of relation OIDs in a DETAIL text, for normalizeDetail. */
  private async learnRelations(detail: string): Promise<void> {
    const oids = [...detail.matchAll(/\brelation (\d+)/g)].map((m) => m[1]).filter((o) => !this.relNames.has(o));
    if (oids.length === 0) return;
    const res = await (
      await this.controlClient()
    ).query<{ oid: string; relname: string }>('SELECT oid::text AS oid, relname FROM pg_catalog.pg_class WHERE oid = ANY($1::oid[])', [
      oids,
    ]);
    for (const row of res.rows) this.relNames.set(row.oid, row.relname);
  }

  /** Backend pids of the current permutation's sessions → session names. */
  sessionPids(): Map<number, string> {
    return new Map(this.pidNames);
  }

  /** Process ids → session names, relation OIDs → names, transaction ids → "?". */
  normalizeDetail(detail: string): string {
    return normalizeDetailText(detail, this.pidNames, this.relNames);
  }

  /** Per-session teardown, then the spec's teardown; errors are ignored as isolationtester does. */
  async end(spec: Spec): Promise<SetupOutput[]> {
    const outputs: SetupOutput[] = [];
    await this.stopRunningSteps();
    for (const s of spec.sessions) {
      const session = this.sessions.get(s.name);
      if (s.teardown === undefined || !session) continue;
      const result = await this.execIdle(session, s.teardown);
      outputs.push({ session: s.name, result });
    }
    if (spec.teardown !== undefined) {
      const result = await exec(await this.controlClient(), spec.teardown);
      outputs.push({ result: { ...result, notices: [] } });
    }
    await this.closeSessions();
    return outputs;
  }

  /** After a failed permutation: terminate backends whose step never finished. */
  private async stopRunningSteps(): Promise<void> {
    const stuck = [...this.sessions.values()].filter((s) => s.running);
    if (stuck.length === 0) return;
    const control = await this.controlClient();
    for (const s of stuck) {
      await control.query('SELECT pg_catalog.pg_terminate_backend($1)', [s.pid]);
      await Promise.race([s.running!.done, sleep(1000)]);
      this.sessions.delete(s.name);
      await s.client.end().catch(() => {});
    }
  }

  private async closeSessions(): Promise<void> {
    await this.stopRunningSteps();
    await Promise.all([...this.sessions.values()].map((s) => s.client.end().catch(() => {})));
    this.sessions.clear();
  }

  /** Closes every connection. */
  async close(): Promise<void> {
    await this.closeSessions();
    await this.control?.end().catch(() => {});
    this.control = undefined;
  }
}
