/**
 * Reading real PostgreSQL's server log next to the simulator's: a SessionDriver that plays on a
 * real server whose log it captures, and one normalization both logs go through (the line
 * prefix, pids, xids, relation OIDs and measured wait times differ between any two runs).
 */
import pg from 'pg';
import { PgDriver } from '../../src/oracle/pgDriver';
import { startPostgres, type PgServer } from '../../src/oracle/server';
import type { PollResult, SessionDriver, SetupOutput, Spec } from '../../src/scenario/types';

/** Fields of one log entry, as the simulator stores them: a line plus its tab-indented continuations. */
export function groupLogLines(raw: string): string[] {
  const out: string[] = [];
  for (const line of raw.split('\n')) {
    if (line.startsWith('\t') && out.length) out[out.length - 1] += `\n${line}`;
    else if (line.trim()) out.push(line);
  }
  return out;
}

const PREFIX = /^(?:\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \S+|\d\d:\d\d:\d\d\.\d{3}) \[(\d+)\] /;

/** The time in a log field's prefix (ms; the date part when there is one), or undefined without a prefix. */
export function logTimeMs(field: string): number | undefined {
  const m = /^(?:(\d{4}-\d\d-\d\d) )?(\d\d):(\d\d):(\d\d\.\d{3})/.exec(field);
  if (!m) return undefined;
  const day = m[1] ? Date.parse(`${m[1]}T00:00:00Z`) : 0;
  return day + ((Number(m[2]) * 60 + Number(m[3])) * 60 + Number(m[4])) * 1000;
}

/** Entries written by two backends this close together have no defined order in the log. */
export const SAME_MOMENT_MS = 20;

/**
 * `expected` (real PostgreSQL's normalized entries, with the time of each) in the order of
 * `actual` where the two differ only by two adjacent runs of entries of different sessions (an
 * entry and its STATEMENT line form one run) logged within SAME_MOMENT_MS of each other:
 * separate backends write to the log independently, so such runs may come out either way (a
 * lock_timeout ERROR and the waiter behind it logging "acquired"). Any other difference is
 * kept, so the comparison still fails on it.
 */
export function alignSameMoment(expected: readonly string[], times: readonly (number | undefined)[], actual: readonly string[]): string[] {
  const out = [...expected];
  const t = [...times];
  const session = (f: string) => /^\[([^\]]+)\] /.exec(f)?.[1];
  /** The end (exclusive) of the run of one session's entries that starts at `from`. */
  const runEnd = (from: number) => {
    let k = from + 1;
    while (k < out.length && session(out[k]) === session(out[from])) k++;
    return k;
  };
  for (let p = 0; p < out.length && p < actual.length; p++) {
    if (out[p] === actual[p]) continue;
    const a = runEnd(p);
    if (a >= out.length || session(out[a]) === undefined || session(out[p]) === undefined) break;
    const b = runEnd(a);
    const swapped = [...out.slice(a, b), ...out.slice(p, a)];
    const times = [...t.slice(p, b)];
    const close =
      times.every((x) => x !== undefined) && Math.max(...(times as number[])) - Math.min(...(times as number[])) <= SAME_MOMENT_MS;
    if (!close || swapped.some((f, k) => f !== actual[p + k])) break;
    out.splice(p, b - p, ...swapped);
    t.splice(p, b - p, ...[...t.slice(a, b), ...t.slice(p, a)]);
    p = b - 1;
  }
  return out;
}

/** The pid of a log field's prefix, or undefined for a line without one. */
export function logPid(field: string): number | undefined {
  const m = PREFIX.exec(field);
  return m ? Number(m[1]) : undefined;
}

/**
 * Rewrites fields for comparison: prefix → "[session] ", every pid → its session name, xids →
 * "?", relation OIDs → names, "after N.NNN ms" → "after ? ms" (the times are returned apart).
 */
export function normalizeLog(
  fields: string[],
  pidNames: ReadonlyMap<number, string>,
  relNames: ReadonlyMap<string, string>,
): { fields: string[]; waitsMs: number[] } {
  const waitsMs: number[] = [];
  const name = (pid: string) => pidNames.get(Number(pid)) ?? `pid?${pid}`;
  const list = (pids: string) => (pids.trim() ? pids.split(', ').map(name).join(', ') : '');
  const out = fields.map((f) =>
    f
      .replace(PREFIX, (_m, pid: string) => `[${name(pid)}] `)
      .replace(/\b([Pp]rocess(?:es)?) (\d+)/g, (_m, w: string, pid: string) => `${w} ${name(pid)}`)
      .replace(
        /holding the lock: ([\d, ]*)([.,]) Wait queue: ([\d, ]*)\./g,
        (_m, h: string, sep: string, w: string) => `holding the lock: ${list(h)}${sep} Wait queue: ${list(w)}.`,
      )
      .replace(/\bby process (\d+)/g, (_m, pid: string) => `by process ${name(pid)}`)
      .replace(/ after (\d+\.\d{3}) ms/g, (_m, ms: string) => {
        waitsMs.push(Number(ms));
        return ' after ? ms';
      })
      .replace(/\brelation (\d+)/g, (m, oid: string) => (relNames.has(oid) ? `relation ${relNames.get(oid)}` : m))
      .replace(/\btransaction \d+/g, 'transaction ?'),
  );
  return { fields: out, waitsMs };
}

/** A real server started with logging to a buffer, and a driver on it that keeps each permutation's session log fields. */
export class LoggingPgDriver implements SessionDriver {
  private raw = '';
  private mark = 0;
  private inner!: PgDriver;
  private server!: PgServer;
  private url = '';
  /** The last permutation's log fields (its sessions only), normalized. */
  last: { fields: string[]; waitsMs: number[] } = { fields: [], waitsMs: [] };
  /** When the server wrote each of `last.fields` (ms, from the line prefix). */
  lastTimes: (number | undefined)[] = [];
  /** The last permutation's log as the server wrote it (every backend's lines, prefixes kept). */
  lastRaw = '';

  /** Starts the server (deadlock_timeout and the rest stay at their defaults). */
  async start(): Promise<void> {
    this.server = await startPostgres({ onLog: (chunk) => (this.raw += chunk.endsWith('\n') ? chunk : `${chunk}\n`) });
    this.url = this.server.url;
    this.inner = new PgDriver(this.url);
  }

  /** Resets and sets up as PgDriver does; log fields from here on belong to this permutation. */
  async begin(spec: Spec): Promise<void | SetupOutput[]> {
    const r = await this.inner.begin(spec);
    await settle();
    this.mark = this.raw.length;
    return r;
  }

  send(session: string, sql: string): Promise<void> {
    return this.inner.send(session, sql);
  }

  poll(session: string, wait: boolean): Promise<PollResult> {
    return this.inner.poll(session, wait);
  }

  normalizeDetail(detail: string): string {
    return this.inner.normalizeDetail(detail);
  }

  /** Reads the permutation's log (resolving relation OIDs before teardown drops them), then tears down. */
  async end(spec: Spec): Promise<void | SetupOutput[]> {
    await settle();
    this.lastRaw = this.raw.slice(this.mark);
    const pids = this.inner.sessionPids();
    const fields = groupLogLines(this.raw.slice(this.mark)).filter((f) => pids.has(logPid(f) ?? -1));
    const relNames = await this.relationNames(fields);
    this.last = normalizeLog(fields, pids, relNames);
    this.lastTimes = fields.map(logTimeMs);
    return this.inner.end(spec);
  }

  private async relationNames(fields: string[]): Promise<Map<string, string>> {
    const oids = [...new Set(fields.flatMap((f) => [...f.matchAll(/\brelation (\d+)/g)].map((m) => m[1])))];
    const names = new Map<string, string>();
    if (!oids.length) return names;
    const c = new pg.Client(this.url);
    await c.connect();
    try {
      const r = await c.query<{ oid: string; relname: string }>(
        'SELECT oid::text AS oid, relname FROM pg_catalog.pg_class WHERE oid = ANY($1::oid[])',
        [oids],
      );
      for (const row of r.rows) names.set(row.oid, row.relname);
    } finally {
      await c.end();
    }
    return names;
  }

  /** Closes the connections and stops the server. */
  async close(): Promise<void> {
    await this.inner?.close();
    await this.server?.stop();
  }
}

/** The postmaster's stderr reaches us asynchronously: give the last lines time to arrive. */
function settle(): Promise<void> {
  return new Promise((r) => setTimeout(r, 300));
}
