/**
 * User preferences shared by every view: language, theme, presenter mode and lesson progress.
 * Persisted in localStorage (when available); the dictionary follows the language reactively.
 */
import { MESSAGES, isLang, langFromNavigator, type Lang, type Messages } from '../i18n';

export type Theme = 'light' | 'dark';

const KEYS = {
  lang: 'lockstep.lang',
  theme: 'lockstep.theme',
  done: 'lockstep.done',
  answers: 'lockstep.answers',
  interview: 'lockstep.interview',
} as const;

/** A saved prediction: the chosen choice id, or null when the learner skipped the question. */
export type SavedAnswer = string | null;

/** Saved answers per lesson id, then per predict key (the predicted step's name). */
export type QuizAnswers = Record<string, Record<string, SavedAnswer>>;

/** Interview mode progress: answered questions (choice id or null = revealed without answering) and checked topics. */
export interface InterviewProgress {
  answers: Record<string, SavedAnswer>;
  checked: string[];
}

/** localStorage that never throws (private mode, jsdom, SSR). */
function storage(): Storage | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage;
  } catch {
    return null;
  }
}

function read(key: string): string | null {
  try {
    return storage()?.getItem(key) ?? null;
  } catch {
    return null;
  }
}

/** A JSON value from storage, or `fallback` when absent, broken or not accepted by `valid`. */
function readJson<T>(key: string, valid: (x: unknown) => x is T, fallback: T): T {
  try {
    const v: unknown = JSON.parse(read(key) ?? 'null');
    return valid(v) ? v : fallback;
  } catch {
    return fallback;
  }
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function isAnswerMap(x: unknown): x is Record<string, SavedAnswer> {
  return isRecord(x) && Object.values(x).every((v) => v === null || typeof v === 'string');
}

function isQuizAnswers(x: unknown): x is QuizAnswers {
  return isRecord(x) && Object.values(x).every(isAnswerMap);
}

function isInterviewProgress(x: unknown): x is InterviewProgress {
  return isRecord(x) && isAnswerMap(x.answers) && Array.isArray(x.checked) && x.checked.every((c) => typeof c === 'string');
}

function write(key: string, value: string): void {
  try {
    storage()?.setItem(key, value);
  } catch {
    /* storage full or disabled: preferences just do not persist */
  }
}

export class Prefs {
  lang = $state<Lang>('en');
  theme = $state<Theme>('light');
  presenter = $state(false);
  /** Classroom switch: every predict checkpoint is asked again, whatever was saved (per visit, not persisted). */
  hideAnswers = $state(false);
  done = $state<string[]>([]);
  /** Predict checkpoint answers, per lesson. */
  answers = $state<QuizAnswers>({});
  interview = $state<InterviewProgress>({ answers: {}, checked: [] });

  /** The dictionary of the current language. */
  t: Messages = $derived(MESSAGES[this.lang]);

  constructor() {
    const savedLang = read(KEYS.lang);
    this.lang = isLang(savedLang) ? savedLang : langFromNavigator(globalThis.navigator?.language);
    const savedTheme = read(KEYS.theme);
    this.theme =
      savedTheme === 'dark' || savedTheme === 'light'
        ? savedTheme
        : globalThis.matchMedia?.('(prefers-color-scheme: dark)').matches
          ? 'dark'
          : 'light';
    try {
      const d = JSON.parse(read(KEYS.done) ?? '[]');
      if (Array.isArray(d)) this.done = d.filter((x): x is string => typeof x === 'string');
    } catch {
      this.done = [];
    }
    this.answers = readJson(KEYS.answers, isQuizAnswers, {});
    this.interview = readJson(KEYS.interview, isInterviewProgress, { answers: {}, checked: [] });
  }

  /** Switches the UI language and remembers it. */
  setLang(lang: Lang): void {
    this.lang = lang;
    write(KEYS.lang, lang);
  }

  /** Switches light/dark and remembers it. */
  toggleTheme(): void {
    this.theme = this.theme === 'dark' ? 'light' : 'dark';
    write(KEYS.theme, this.theme);
  }

  /** Presenter mode is per visit (a classroom setting), so it is not persisted. */
  togglePresenter(): void {
    this.presenter = !this.presenter;
  }

  /** Turns the classroom "hide the answer" switch on or off. */
  toggleHideAnswers(): void {
    this.hideAnswers = !this.hideAnswers;
  }

  /** True once the lesson was played to its end. */
  isDone(id: string): boolean {
    return this.done.includes(id);
  }

  /** Records a finished lesson. */
  markDone(id: string): void {
    if (this.done.includes(id)) return;
    this.done = [...this.done, id];
    write(KEYS.done, JSON.stringify(this.done));
  }

  /** The saved prediction for a lesson's checkpoint; undefined when not answered yet. */
  answerOf(lesson: string, key: string): SavedAnswer | undefined {
    const a = this.answers[lesson];
    return a && Object.hasOwn(a, key) ? a[key] : undefined;
  }

  /** Saves a prediction (null = skipped). */
  saveAnswer(lesson: string, key: string, choice: SavedAnswer): void {
    this.answers = { ...this.answers, [lesson]: { ...this.answers[lesson], [key]: choice } };
    write(KEYS.answers, JSON.stringify(this.answers));
  }

  /** The saved interview answer; undefined when not answered yet. */
  interviewAnswerOf(question: string): SavedAnswer | undefined {
    return Object.hasOwn(this.interview.answers, question) ? this.interview.answers[question] : undefined;
  }

  /** Saves an interview answer (null = model answer revealed without choosing). */
  saveInterviewAnswer(question: string, choice: SavedAnswer): void {
    this.interview = { ...this.interview, answers: { ...this.interview.answers, [question]: choice } };
    write(KEYS.interview, JSON.stringify(this.interview));
  }

  /** Forgets one interview answer, so the question can be answered again. */
  clearInterviewAnswer(question: string): void {
    const answers = { ...this.interview.answers };
    delete answers[question];
    this.interview = { ...this.interview, answers };
    write(KEYS.interview, JSON.stringify(this.interview));
  }

  /** Ticks or unticks an interview checklist topic. */
  setChecked(topic: string, checked: boolean): void {
    const rest = this.interview.checked.filter((t) => t !== topic);
    this.interview = { ...this.interview, checked: checked ? [...rest, topic] : rest };
    write(KEYS.interview, JSON.stringify(this.interview));
  }

  /** Forgets every finished lesson, prediction and interview answer (preferences stay). */
  resetProgress(): void {
    this.done = [];
    this.answers = {};
    this.interview = { answers: {}, checked: [] };
    for (const key of [KEYS.done, KEYS.answers, KEYS.interview]) {
      try {
        storage()?.removeItem(key);
      } catch {
        /* storage disabled: nothing was saved */
      }
    }
  }
}

/** The app-wide preferences. */
export const prefs = new Prefs();
