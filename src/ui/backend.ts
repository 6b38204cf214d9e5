/**
 * The UI-side contract the engine implements (backend-worker.ts runs it in a Web Worker).
 * The UI never computes engine state itself: it renders what a PlayerBackend returns.
 */
import type { EngineSnapshot } from '../engine/types';
import type { HideablePanel } from '../scenario/lesson';
import type { ScriptItem as ScenarioScriptItem } from '../scenario/types';

/** A script item (scenario/types.ts) with what the lesson adds to it. */
export interface ScriptItem extends ScenarioScriptItem {
  /** What this item shows the learner, from the lesson (absent for specs). */
  narration?: LocalizedText;
  /** A checkpoint asked before this item runs. */
  predict?: PredictInfo;
  /** Id of a LessonMeta.code snippet shown with this item. */
  code?: string;
  /** For a pause: the virtual time that passes. */
  pauseMs?: number;
}

/** A predict checkpoint: asked before its script item, resolved once `target` has run. */
export interface PredictInfo {
  /** Stable key for saved answers: the spec step name of the predicted step ("a2"). */
  key: string;
  /** Script index of the step whose outcome is predicted. */
  target: number;
  question: LocalizedText;
  choices: { id: string; label: LocalizedText }[];
  /** The id of the right choice. */
  answer: string;
  explanation: LocalizedText;
}

/** Language of a code snippet, as the lesson format names it. */
export type CodeLanguage = 'go' | 'sql' | 'ts';

/** Application code a lesson shows beside the sessions (never executed). */
export interface CodeSnippet {
  id: string;
  language: CodeLanguage;
  title: LocalizedText;
  source: string;
}

/** Lesson-wide content the player shows (absent for specs). */
export interface LessonMeta {
  id: string;
  /** The goal, shown before step 1. */
  summary?: LocalizedText;
  /** What the lesson showed, shown once its last step has run. */
  conclusion?: LocalizedText;
  code?: CodeSnippet[];
  /** Panels kept hidden until the script's last item has run (lesson option hideUntilEnd). */
  hideUntilEnd?: HideablePanel[];
}

/** Everything the player renders after one backend call. */
export interface PlayerState {
  snapshot: EngineSnapshot;
  script: ScriptItem[];
  /** Number of script items done. */
  cursor: number;
  /** True once an ad-hoc statement or manual clock advance left the script. */
  offScript: boolean;
  /** The clock stopped inside the last step (a timeline moment); the next action finishes the step first. */
  midStep?: boolean;
  /** Engine or watchdog message. */
  error?: string;
  /** The open lesson's own content (narration lives on the script items). */
  lesson?: LessonMeta;
}

/** What the player may ask the engine to do. Every call resolves to the new state. */
export interface PlayerBackend {
  open(source: { kind: 'lesson'; id: string } | { kind: 'spec'; text: string }): Promise<PlayerState>;
  next(): Promise<PlayerState>;
  /** Undo / jump: the backend restores that exact state; `atMs` stops inside step `cursor` at that virtual time. */
  goto(cursor: number, atMs?: number): Promise<PlayerState>;
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
  /** The lesson's predict checkpoints: key (predicted step name) → right choice id, to score saved answers. */
  predictAnswers?: Record<string, string>;
  /** Optional estimate in minutes. */
  minutes?: number;
  /** beginner | intermediate | senior, from the lesson file. */
  level?: string;
  /** The lesson's topic tags (kebab-case), translated through CourseData.tags. */
  topics?: string[];
}

/** The course as a path (lessons/course/course.yaml): parts in order, tracks, the first lesson, tag labels. */
export interface CourseData {
  start: string;
  parts: { id: string; title: LocalizedText; lessons: string[] }[];
  tracks: { id: string; title: LocalizedText; description: LocalizedText; lessons: string[] }[];
  tags: Record<string, LocalizedText>;
}

/** One interview question: a quiz when it has choices, otherwise a free answer. */
export interface InterviewQuestionData {
  id: string;
  question: LocalizedText;
  choices?: { id: string; label: LocalizedText }[];
  /** The right choice id (with choices only). */
  answer?: string;
  model: LocalizedText;
  /** The lesson that proves the answer. */
  lesson: string;
  /** Further lessons worth replaying. */
  see: string[];
  /** What an interviewer asks next (free answers). */
  followups?: { id: string; question: LocalizedText; model: LocalizedText }[];
}

/** The interview mode's content (lessons/interview/interview.yaml). */
export interface InterviewData {
  title: LocalizedText;
  intro?: LocalizedText;
  questions: InterviewQuestionData[];
  /** Senior+ topics: a checklist, each linked to lessons. */
  topics: { title: LocalizedText; lessons: string[] }[];
  /** Short pages on senior topics (`#/interview/topics/<id>`); paragraphs separated by blank lines. */
  pages?: { id: string; title: LocalizedText; body: LocalizedText; lessons: string[] }[];
}

/** Where the lesson list, the interview questions and the course come from (lessons/, bundled at build time). */
export interface LessonCatalog {
  list(): Promise<LessonSummary[]>;
  /** The interview questions; null when the course has none yet. */
  interview?(): Promise<InterviewData | null>;
  /** The course order, tracks and tag labels; null when the course file is absent. */
  course?(): Promise<CourseData | null>;
  /** A lesson's script and narration before the engine has run it (absent: the player waits for the engine). */
  preview?(id: string): LessonPreview | null;
}

/** What the player shows of a lesson before the engine has run anything: its script and content. */
export interface LessonPreview {
  script: ScriptItem[];
  meta: LessonMeta;
}

/** A catalog over a fixed array of lessons (tests and fixtures). */
export function staticCatalog(lessons: LessonSummary[]): LessonCatalog {
  return { list: async () => lessons.slice() };
}
