/** The dictionaries and language helpers (no Svelte here). */
import { en, type Messages } from './en';
import { ru } from './ru';
import type { LocalizedText } from '../backend';

export type { Messages } from './en';

/** Supported UI languages, in menu order. */
export const LANGS = ['en', 'ru'] as const;
export type Lang = (typeof LANGS)[number];

export const MESSAGES: Readonly<Record<Lang, Messages>> = { en, ru };

/** True for a supported language code. */
export function isLang(x: unknown): x is Lang {
  return typeof x === 'string' && (LANGS as readonly string[]).includes(x);
}

/** The default language for a navigator.language value ("ru-RU" → ru, anything else → en). */
export function langFromNavigator(language: string | undefined): Lang {
  const base = (language ?? '').toLowerCase().split('-')[0];
  return isLang(base) ? base : 'en';
}

/** Picks the text for `lang` from a LocalizedText, falling back to English, then any language. */
export function localized(text: LocalizedText, lang: Lang): string {
  if (typeof text === 'string') return text;
  return text[lang] ?? text.en ?? Object.values(text).find((v) => typeof v === 'string') ?? '';
}
