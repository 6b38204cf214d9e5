/**
 * Multi-statement query strings with named result slots. A builder adds each part under a name
 * with the number of results it produces; results are then read by that name, never by an
 * offset computed at the call site. The SQL text is the parts concatenated as given.
 */
import { EngineInternalError } from '../errors';
import type { PgMessage, RawResult, StatementResult } from '../types';
import type { PgliteExecutor } from './executor';

/** A query string under construction: its parts, each with a name and a result count. */
export class Batch {
  private readonly parts: string[] = [];
  private readonly slots = new Map<string, { at: number; count: number }>();
  private total = 0;

  /** Appends `sql` (joined to the previous part exactly as given) producing `count` results, as slot `name`. */
  add(name: string, sql: string, count: number): this {
    if (this.slots.has(name)) throw new EngineInternalError(`batch slot "${name}" added twice`);
    this.slots.set(name, { at: this.total, count });
    this.parts.push(sql);
    this.total += count;
    return this;
  }

  /** The whole query string. */
  get sql(): string {
    return this.parts.join('');
  }

  /** How many results the whole batch produces when no statement fails. */
  get count(): number {
    return this.total;
  }

  /** Where slot `name`'s results start among the batch's results. */
  start(name: string): number {
    return this.slot(name).at;
  }

  /** Slot `name`'s position and result count. */
  slot(name: string): { at: number; count: number } {
    const s = this.slots.get(name);
    if (!s) throw new EngineInternalError(`batch has no slot "${name}"`);
    return s;
  }

  /** Runs the batch as one simple-protocol query. */
  async run(ex: PgliteExecutor): Promise<BatchResult> {
    return new BatchResult(this, await ex.run(this.sql));
  }
}

/** A batch's outcome, read by slot name. */
export class BatchResult {
  constructor(
    readonly batch: Batch,
    readonly raw: RawResult,
  ) {}

  /** The query string's error, if a statement failed (later slots then have no results). */
  get error(): PgMessage | undefined {
    return this.raw.error;
  }

  /** Slot `name`'s `i`th result (undefined when the batch stopped before it). */
  get(name: string, i = 0): StatementResult | undefined {
    const { at, count } = this.batch.slot(name);
    if (i >= count) throw new EngineInternalError(`batch slot "${name}" has ${count} results, asked for #${i}`);
    return this.raw.results[at + i];
  }

  /** All of slot `name`'s results that arrived. */
  all(name: string): StatementResult[] {
    const { at, count } = this.batch.slot(name);
    return this.raw.results.slice(at, at + count);
  }

  /** Whether every result before slot `name` arrived. */
  reached(name: string): boolean {
    return this.raw.results.length >= this.batch.start(name);
  }

  /** Notices raised from slot `name`'s first statement on. */
  noticesFrom(name: string): PgMessage[] {
    const at = this.batch.start(name);
    return this.raw.notices.filter((_, i) => (this.raw.noticeAt?.[i] ?? 0) >= at);
  }
}
