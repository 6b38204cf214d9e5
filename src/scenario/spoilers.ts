/**
 * Spoiler check: what a lesson shows before step 1 (title and summary) must not state the outcome
 * of any of its predict checkpoints. A heuristic over the text, used by the lesson tests.
 */
import type { Lesson, Localized } from './lesson';

/** Error codes a checkpoint's outcome can name. */
const SQLSTATE_RE = /\b(?:40P01|55P03|40001|23505|25P02|57P01|57014|25P03)\b/gi;

const STOP = new Set(
  (
    'the and but for with that this then than what when which who whom its it is are was were be been being has have had ' +
    'does did not no yes a an of to in on at by as or from into one two all any each now only also just here there their them they ' +
    'its own same other after before until about more most very can could would should will may must so if while both ' +
    'и в во на с со к ко по за из от до не ни но а же ли то что как так это эта этот эти его её их она он оно они ' +
    'для при под над без или уже ещё еще все всё всех тот та те там тут вот один одна одно два две только также ' +
    'через затем нет потом того когда пока чем где'
  ).split(' '),
);

/** Content words of a text with their stems: words of 3+ letters (codes kept whole), stems cut to 4 characters. */
function words(text: string): { stem: string; keyword: boolean }[] {
  return (text.match(/[\p{L}\p{N}_]+/gu) ?? [])
    .filter((w) => w.length >= 3 && !STOP.has(w.toLowerCase()))
    .map((w) => ({
      stem: /\d/.test(w) ? w.toUpperCase() : w.toLowerCase().slice(0, 4),
      // An upper-case word is SQL (ACCESS EXCLUSIVE, SKIP LOCKED): a name of the topic, not an outcome.
      keyword: /^[A-Z_]{3,}$/.test(w),
    }));
}

/** Content-word stems of a text. */
export function stems(text: string): string[] {
  return words(text).map((w) => w.stem);
}

/** Unordered pairs of content stems at most three words apart, as "a b" strings, skipping pairs of SQL keywords. */
function pairs(text: string): Set<string> {
  const s = words(text);
  const out = new Set<string>();
  for (let i = 0; i < s.length; i++)
    for (let j = i + 1; j <= i + 3 && j < s.length; j++)
      if (!(s[i].keyword && s[j].keyword)) out.add([s[i].stem, s[j].stem].sort().join(' '));
  return out;
}

export interface Spoiler {
  lang: keyof Localized;
  /** 'title' or 'summary'. */
  field: 'title' | 'summary';
  /** 1-based number of the checkpoint whose outcome the text gives away. */
  checkpoint: number;
  /** What gives it away: an error code, a pair of words or a word shared with the right answer or its explanation. */
  evidence: string;
}

/**
 * The places where a lesson's title or summary states the outcome of one of its checkpoints:
 * it names an error code the right answer names, or it shares a pair of nearby content words
 * with the right answer or its explanation. Pairs that describe the setting rather than an
 * outcome do not count: those in any question of the lesson, in a wrong choice of that
 * checkpoint, in the narration the learner has read before it, in the title (for the summary) or
 * in the SQL of the steps. A title, which names the topic, is compared with the right choice only.
 */
export function findSpoilers(lesson: Pick<Lesson, 'title' | 'summary' | 'steps'>): Spoiler[] {
  const out: Spoiler[] = [];
  const predicts = lesson.steps.flatMap((s) => (s.kind === 'predict' ? [s] : []));
  const sql = lesson.steps.flatMap((s) => (s.kind === 'step' ? [...pairs(s.sql)] : []));
  predicts.forEach((item, i) => {
    // What the learner has read by the time this checkpoint asks: the narration of the items before it.
    const before = lesson.steps
      .slice(0, lesson.steps.indexOf(item))
      .flatMap((s) => (s.kind !== 'predict' && s.narration ? [s.narration] : []));
    for (const lang of ['en', 'ru'] as const) {
      const right = item.choices.find((c) => c.id === item.answer)?.label[lang] ?? '';
      const wrong = item.choices.filter((c) => c.id !== item.answer).map((c) => c.label[lang]);
      const codes = new Set((right.match(SQLSTATE_RE) ?? []).map((c) => c.toUpperCase()));
      const setting = new Set([
        ...sql,
        ...before.flatMap((n) => [...pairs(n[lang])]),
        ...predicts.flatMap((p) => [...pairs(p.question[lang])]),
        ...wrong.flatMap((w) => [...pairs(w)]),
      ]);
      const outcome = [...pairs(`${right} ${item.explanation[lang]}`)].filter((p) => !setting.has(p));
      const answered = [...pairs(right)].filter((p) => !setting.has(p));
      for (const field of ['title', 'summary'] as const) {
        const text = lesson[field][lang];
        const found = new Set<string>();
        for (const code of text.match(SQLSTATE_RE) ?? []) if (codes.has(code.toUpperCase())) found.add(code.toUpperCase());
        const titled = field === 'summary' ? pairs(lesson.title[lang]) : new Set<string>();
        // A title names the topic, so only the right choice's own words count there, not the explanation's.
        const mine = pairs(text);
        for (const p of field === 'summary' ? outcome : answered) if (mine.has(p) && !titled.has(p)) found.add(`"${p}"`);
        for (const evidence of found) out.push({ lang, field, checkpoint: i + 1, evidence });
      }
    }
  });
  return out;
}
