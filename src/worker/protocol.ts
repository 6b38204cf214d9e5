/**
 * The message protocol between the main thread (client.ts) and the engine Worker (worker.ts).
 * Every request carries an id; the worker answers each one exactly once, errors as data.
 */
import type { PlayerAction, PlayerFrame } from '../sim/player';
import type { ExploreBatch } from '../scenario/explore';
import type { StatementLocks } from '../engine/pg/statementLocks';

export type { RelationLock, RowLock, StatementLocks } from '../engine/pg/statementLocks';
import type { SyntaxProblem } from './sqlcheck';

/** What to play: a lesson's YAML (compiled in the worker) or isolationtester spec text. */
export type ScenarioSource = { kind: 'lesson'; id: string; yaml: string } | { kind: 'spec'; text: string; permutation?: number };

/** A request without its id: one per PlayerBackend call, plus 'replay' for watchdog recovery. */
export type Command =
  /** `cancelledSteps`: script items the learner stopped before; they run as cancelled (57014). */
  | { type: 'open'; source: ScenarioSource; cancelledSteps?: number[] }
  | { type: 'action'; action: PlayerAction }
  /** `atMs`: the moment inside step `cursor` (its clock stopped there), for a timeline jump. */
  | { type: 'goto'; cursor: number; atMs?: number }
  | { type: 'reset' }
  | { type: 'replay'; history: PlayerAction[] }
  | { type: 'ping' }
  /**
   * Runs permutations `from` … `from + count - 1` of spec `text` (scenario lab, challenges); plays
   * nothing. `invariant`: a query run over the final data of each, its verdict in the outcome.
   */
  | { type: 'explore'; text: string; from: number; count: number; withRuns?: boolean; invariant?: string; stopAtStall?: boolean }
  /** What `sql` locks on a fresh database holding `schema` (the #/locks page); plays nothing. */
  | { type: 'locks'; schema: string; sql: string };

/**
 * The answer to a 'locks' request: a text that does not parse (which one, and where), one with
 * nothing to run or with its own transaction control, or the statements' parse trees
 * (libpg-query's JSON, one per statement) with what PostgreSQL did.
 */
export type LocksAnswer =
  | { kind: 'syntax'; where: 'schema' | 'statement'; problem: SyntaxProblem }
  | { kind: 'empty' }
  | { kind: 'transaction-control' }
  | { kind: 'result'; statements: unknown[]; result: StatementLocks };

export type Request = Command & { id: number };

/**
 * Why a request failed. 'no-scenario': nothing is open; 'invalid-source': the lesson or spec
 * does not parse; 'fatal': the worker's PGlite is unusable (the client restarts the worker).
 */
export type FailureKind = 'no-scenario' | 'invalid-source' | 'fatal';

/** The answer to one request. `history` lets the client rebuild a replacement worker. */
export type Response =
  | { id: number; ok: true; state: PlayerFrame; history: PlayerAction[]; timing: Timing }
  | { id: number; ok: true; pong: true; timing: Timing }
  | { id: number; ok: true; explored: ExploreBatch; timing: Timing }
  | { id: number; ok: true; locks: LocksAnswer; timing: Timing }
  | { id: number; ok: false; kind: FailureKind; message: string };

/** Where the worker spent its time on a request (ms, measured with performance.now()). */
export interface Timing {
  /** Time spent inside the worker handling this request. */
  handleMs: number;
  /**
   * The answer was a step done ahead (host.ts `lookAhead`): what that step took in the worker
   * (handleMs is then only the lookup); a rebuild replays that work again.
   */
  workMs?: number;
  /** Worker start to PGlite + parser ready (same on every answer once known). */
  bootMs?: number;
}

/** True for a message that answers a request. */
export function isResponse(m: unknown): m is Response {
  return typeof m === 'object' && m !== null && typeof (m as { id?: unknown }).id === 'number' && 'ok' in m;
}
