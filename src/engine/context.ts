/** The engine's full state: the model state plus the executor and the PGlite-side bookkeeping. */
import type { PgliteExecutor } from './pg/executor';
import { newModelState, type ModelState } from './state';

/** Model state, the executor, and what only the PGlite side keeps. */
export interface EngineContext extends ModelState {
  readonly ex: PgliteExecutor;
  /** Relation OID (as shown) → name, cached until the catalog changes. */
  relNames: Map<string, string> | null;
  /** The user sequences (regclass text), from the last catalog refresh. */
  sequences: string[];
  commitsSinceVacuum: number;
  /** A prepared transaction pins the xmin horizon while any session holds an exported snapshot. */
  pinned: boolean;
  /** Version ids handed out to row versions statements created (see imageOps). */
  versionSeq: number;
  /** User PL/pgSQL functions with an EXCEPTION clause, read once per catalog (null: not read yet). */
  exceptionFunctions?: Set<string> | null;
  /** Whether any user SQL or PL/pgSQL function exists, read once per catalog (null: not read yet). */
  userFunctions?: boolean | null;
  /** The tables with a foreign key whose ON DELETE / ON UPDATE writes them (CASCADE, SET NULL, SET DEFAULT), read once per catalog. */
  cascadingTables?: Set<number> | null;
  /** Whether a committed user function's body calls an advisory lock function, read with the catalog. */
  advisoryFunctions?: boolean | null;
  /**
   * Whether this engine has changed PGlite by more than row writes to user tables: DDL (or any
   * statement replayed as text) committed, a VACUUM, setup SQL. Until then a TRUNCATE of the
   * user tables and the setup's data statements put PGlite back where the setup left it.
   */
  beyondRows: boolean;
}

/** A fresh engine context on an executor. */
export function newContext(ex: PgliteExecutor): EngineContext {
  return { ...newModelState(), ex, relNames: null, sequences: [], commitsSinceVacuum: 0, pinned: false, versionSeq: 0, beyondRows: false };
}
