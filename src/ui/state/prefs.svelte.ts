/**
 * User preferences shared by every view: language, theme, presenter mode and lesson progress.
 * Persisted in localStorage (when available); the dictionary follows the language reactively.
 */
import { MESSAGES, isLang, langFromNavigator, type Lang, type Messages } from '../i18n';

export type Theme = 'light' | 'dark';

const KEYS = { lang: 'lockstep.lang', theme: 'lockstep.theme', done: 'lockstep.done' } as const;

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
  done = $state<string[]>([]);

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
}

/** The app-wide preferences. */
export const prefs = new Prefs();
