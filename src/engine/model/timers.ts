/**
 * The virtual clock's timer list. Time moves only when the engine is told to advance;
 * timers due at the same instant fire in the order they were set.
 */
export type TimerKind = 'deadlock_timeout' | 'lock_timeout' | 'statement_timeout' | 'idle_in_transaction_session_timeout' | 'pg_sleep';

export interface Timer {
  id: number;
  session: string;
  kind: TimerKind;
  atMs: number;
}

/** Ordered, cancellable timers. */
export class Timers {
  private list: Timer[] = [];
  private seq = 0;

  /** Sets a timer and returns its id. */
  set(session: string, kind: TimerKind, atMs: number): number {
    const t = { id: ++this.seq, session, kind, atMs };
    this.list.push(t);
    this.list.sort((a, b) => a.atMs - b.atMs || a.id - b.id);
    return t.id;
  }

  /** Cancels timers of a session, optionally only of some kinds. */
  cancel(session: string, kinds?: TimerKind[]): void {
    this.list = this.list.filter((t) => t.session !== session || (kinds !== undefined && !kinds.includes(t.kind)));
  }

  /** The next timer due, without removing it. */
  peek(): Timer | undefined {
    return this.list[0];
  }

  /** Removes and returns the next timer due. */
  shift(): Timer | undefined {
    return this.list.shift();
  }

  /** All pending timers in firing order. */
  all(): Timer[] {
    return this.list.map((t) => ({ ...t }));
  }

  /** A copy. */
  clone(): Timers {
    const c = new Timers();
    c.list = this.all();
    c.seq = this.seq;
    return c;
  }
}
