/**
 * The UI-side contract the engine (in a Web Worker, wired by the lead) implements.
 * The UI never computes engine state itself: it renders what a PlayerBackend returns.
 */
import type { EngineSnapshot } from '../engine/types';

/** One item of a lesson/spec script as the player shows it. */
export interface ScriptItem {
  index: number;
  kind: 'step' | 'pause' | 'advance';
  session?: string;
  step?: string;
  sql?: string;
  label: string;
}

/** Everything the player renders after one backend call. */
export interface PlayerState {
  snapshot: EngineSnapshot;
  script: ScriptItem[];
  /** Number of script items done. */
  cursor: number;
  /** True once an ad-hoc statement or manual clock advance left the script. */
  offScript: boolean;
  /** Engine or watchdog message. */
  error?: string;
}

/** What the player may ask the engine to do. Every call resolves to the new state. */
export interface PlayerBackend {
  open(source: { kind: 'lesson'; id: string } | { kind: 'spec'; text: string }): Promise<PlayerState>;
  next(): Promise<PlayerState>;
  /** Undo / jump: the backend restores that exact state. */
  goto(cursor: number): Promise<PlayerState>;
  reset(): Promise<PlayerState>;
  runAdHoc(session: string, sql: string): Promise<PlayerState>;
  advance(ms: number): Promise<PlayerState>;
  advanceToNextTimer(): Promise<PlayerState>;
}

/** Text that a lesson may provide in several languages; a plain string is language-neutral. */
export type LocalizedText = string | { en?: string; ru?: string };

/** One entry of the lesson list. */
export interface LessonSummary {
  id: string;
  title: LocalizedText;
  topic: LocalizedText;
  /** Number of script items, shown as the lesson's length. */
  steps: number;
  /** Optional estimate in minutes. */
  minutes?: number;
}

/** Where the lesson list comes from (lessons/ on disk, bundled by the lead). */
export interface LessonCatalog {
  list(): Promise<LessonSummary[]>;
}

/** A catalog over a fixed array (also what main.ts uses until lessons are bundled). */
export function staticCatalog(lessons: LessonSummary[]): LessonCatalog {
  return { list: async () => lessons.slice() };
}
