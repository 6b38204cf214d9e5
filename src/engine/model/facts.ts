/**
 * Facts about a statement that the PGlite side (pg/) reads and the lock model (model/) consumes:
 * what the catalog holds, what locks a backend holds, which tuples the statement touched.
 */
import type { LockMode, RowLockMode } from './locks/types';
import type { PredTarget } from './ssi';
import type { LockTag } from './locks/types';
import type { LogEntry } from './log';
import type { TupleId } from './rowlocks';
import type { SsiWrite } from './ssi';
import type { RawResult } from '../types';

/** A user table as the catalog describes it. */
export interface CatalogTable {
  oid: number;
  name: string;
  /** The table as SQL names it wherever the search_path is: schema-qualified, quoted where needed. */
  sqlName?: string;
  columns: string[];
  /** Columns a row image may set (not generated). */
  writable: string[];
  /**
   * Identity columns GENERATED ALWAYS: an UPDATE may set them to DEFAULT only (428C9), so an
   * update's row image leaves them out; an insert's sets them with OVERRIDING SYSTEM VALUE.
   */
  identityAlways?: string[];
  /**
   * Unique indexes: their key columns as PostgreSQL prints them in a key description (a column
   * name, or an expression such as `lower(k)`), a partial index's predicate, and NULLS NOT DISTINCT.
   */
  uniqueIndexes: {
    name: string;
    columns: string[];
    pred?: string;
    nullsNotDistinct?: true;
    /** A DEFERRABLE unique or primary key constraint's index: its constraint's name and initial mode. */
    deferrable?: { constraint: string; initiallyDeferred: boolean };
  }[];
  /**
   * Exclusion constraints on plain columns: the index's name, its key columns, their types and
   * the constraint's operators (schema-qualified, `OPERATOR(pg_catalog.&&)`).
   */
  exclusions?: { name: string; columns: string[]; types: string[]; ops: string[] }[];
  /** The table has (or had) triggers or rules: replaying changes to it needs session_replication_role = replica. */
  triggersOrRules: boolean;
  /**
   * Every attribute in attnum order, dropped ones too, as a heap tuple lays them out (type OID,
   * attlen, attalign): the values of new row versions are read from the pages with them
   * (pageScan.ts, versionValues). Absent for an inheritance parent, whose SQL read also returns
   * its children's rows.
   */
  attributes?: { name: string; type: number; len: number; align: string; dropped?: true }[];
}

/** The locks one backend holds at a moment (pg_locks, this backend only). */
export interface LockSample {
  relations: { oid: number; name: string; mode: LockMode; isIndex: boolean; table: string }[];
  advisory: { key1: number; key2: number; field4: 1 | 2; mode: LockMode }[];
  xids: Set<number>;
  /** SIREAD locks (SERIALIZABLE only) on user tables and indexes. */
  predicate: PredTarget[];
}

/** A tuple a statement locked, updated or deleted (from its header, by pageinspect). */
export interface TupleTouch {
  oid: number;
  relation: string;
  block: number;
  offset: number;
  mode: RowLockMode;
  /** For updates: the new version's ctid; for deletes and locks: undefined. */
  newCtid?: string;
  /** For locks of a version that was updated: the next version's ctid (t_ctid). */
  next?: string;
  /** Deleted by an UPDATE that moved the row to another partition (t_ctid is the moved-partitions marker). */
  movedPartition?: true;
  /** The tuple was created by this session's own transaction (nobody else can see it). */
  own: boolean;
  /** The (sub)transaction id that took the lock: with per-row savepoints it gives the processing order. */
  xid: number;
  /** The first of the statement's advisory lock calls made once this row was locked (pg/advisoryOrder.ts); none: after them all. */
  call?: number;
}

/** A tuple a statement created. */
export interface InsertedTuple {
  oid: number;
  relation: string;
  ctid: string;
  /** The version a later command of the same statement (a function it called) updated it into. */
  next?: string;
  /** A later command of the same statement deleted it (or moved it to another partition). */
  deleted?: true;
}

/** A user relation (table or index) by OID, for naming the relation locks a sample reports. */
export interface RelationInfo {
  name: string;
  isIndex: boolean;
  /** The table (the relation itself, or the table an index belongs to). */
  table: string;
}

/** One lock a statement takes, in acquisition order (model/plan.ts). */
export type PlanItem =
  | { kind: 'rel'; tag: LockTag & { type: 'relation' }; mode: LockMode; name: string }
  /**
   * `deletes`: the statement deletes the row (mode Update without a new version). `lockedBefore`:
   * the first of the statement's advisory calls made once the row was locked (inCallOrder).
   */
  | { kind: 'row'; tuple: TupleId; mode: RowLockMode; deletes?: true; lockedBefore?: number }
  /** `deferred`: a deferred unique constraint's key, which the index only notes (checked at COMMIT). */
  | { kind: 'key'; index: string; key: string; ctid?: string; table?: string; exclusion?: true; deferred?: true }
  /** `call`: the statement's first call that asked for the lock, counted as the dry run noted them (inCallOrder). */
  | { kind: 'adv'; tag: LockTag & { type: 'advisory' }; mode: LockMode; sessionLevel: boolean; call?: number };

/** A dry run's findings: the facts about one statement the model consumes. */
export interface DryRun {
  raw: RawResult;
  plan: PlanItem[];
  assignsXid: boolean;
  inserted: { table: string; key: string; index: string; ctid?: string }[];
  /** The session's session-level advisory locks after the statement (null: unchanged). */
  sessionAdvisory: { key1: number; key2: number; field4: 1 | 2; mode: LockMode; count: number }[] | null;
  /** pg_cancel_backend / pg_terminate_backend calls on simulated sessions, by pid. */
  signals?: { kind: 'cancel' | 'terminate'; pid: number }[];
  /** How many of the statement's injected errors (pg/inject.ts) this run raised. */
  injectedFired?: number;
  /** What to append to the session's transaction log (null: nothing to replay). */
  entry: LogEntry | null;
  /**
   * The tracked settings (name, setting, unit, shown) as the statement left them, read when it
   * could change them (set_config, a SET inside a function): compared with the session's own.
   */
  gucsAfter?: (string | null)[][];
  /** SERIALIZABLE: what the statement's scan examined (its SIREAD targets), which of them are new, and what it wrote. */
  ssi?: { scope: PredTarget[]; added: PredTarget[]; writes: SsiWrite[]; indexEntriesRead?: number; emptyTables?: Set<number> };
  /** The PGlite xid of this run's transaction (row versions committed earlier have smaller xmins). */
  horizon?: number;
  /** A later command of the statement (a function it called) updated or deleted a version the statement created. */
  remodified?: true;
  /** A locking SELECT that failed: the rows its cursor returned (and locked) before the error. */
  rowsBeforeError?: number;
}
