import { describe, expect, it } from 'vitest';
import { MESSAGES, langFromNavigator, localized } from './index';
import { TABLE_LOCK_MODES, ROW_LOCK_MODES } from '../../engine/model/locks/modes';

/** Every key path of a dictionary, with the type of its leaf. */
function shape(x: unknown, prefix = ''): string[] {
  if (x && typeof x === 'object') return Object.entries(x).flatMap(([k, v]) => shape(v, `${prefix}.${k}`));
  return [`${prefix}:${typeof x}`];
}

describe('dictionaries', () => {
  it('RU has exactly the keys of EN', () => {
    expect(shape(MESSAGES.ru).sort()).toEqual(shape(MESSAGES.en).sort());
  });
  it.each(['en', 'ru'] as const)('%s explains every lock mode of modes.ts', (lang) => {
    for (const m of TABLE_LOCK_MODES) expect(MESSAGES[lang].tableModeCommands[m]).toBeTruthy();
    for (const m of ROW_LOCK_MODES) expect(MESSAGES[lang].rowModeCommands[m]).toBeTruthy();
  });
  it('ROW EXCLUSIVE lists UPDATE, DELETE, INSERT, MERGE', () => {
    expect(MESSAGES.en.tableModeCommands.RowExclusiveLock).toBe('UPDATE, DELETE, INSERT, MERGE.');
  });
  it.each([
    { args: 1, expected: '1 шаг' },
    { args: 3, expected: '3 шага' },
    { args: 5, expected: '5 шагов' },
    { args: 11, expected: '11 шагов' },
    { args: 21, expected: '21 шаг' },
  ])('Russian plural $args', ({ args, expected }) => expect(MESSAGES.ru.lessons.steps(args)).toBe(expected));
});

describe('langFromNavigator', () => {
  it.each([
    { args: 'ru-RU', expected: 'ru' },
    { args: 'RU', expected: 'ru' },
    { args: 'en-GB', expected: 'en' },
    { args: 'de-DE', expected: 'en' },
    { args: undefined, expected: 'en' },
  ])('$args → $expected', ({ args, expected }) => expect(langFromNavigator(args)).toBe(expected));
});

describe('localized', () => {
  it.each([
    { args: ['plain', 'ru'] as const, expected: 'plain' },
    { args: [{ en: 'Hi', ru: 'Привет' }, 'ru'] as const, expected: 'Привет' },
    { args: [{ en: 'Hi' }, 'ru'] as const, expected: 'Hi' },
    { args: [{ ru: 'Привет' }, 'en'] as const, expected: 'Привет' },
  ])('$expected', ({ args, expected }) => expect(localized(args[0], args[1])).toBe(expected));
});
