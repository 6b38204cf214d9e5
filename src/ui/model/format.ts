/** Small text formatters shared by the views. */
import type { PgMessage } from '../../scenario/types';

/** The words for time units in one UI language (the dictionaries' `units`). */
export interface TimeUnits {
  ms: string;
  s: string;
  min: string;
  /** Decimal separator ("." in English, "," in Russian). */
  decimal: string;
}

const EN_UNITS: TimeUnits = { ms: 'ms', s: 's', min: 'min', decimal: '.' };

/** Virtual time in words: "750 ms", "1.25 s", "2 min 5 s" (or "1,25 с" with Russian units). */
export function formatMs(ms: number, u: TimeUnits = EN_UNITS): string {
  const v = Math.max(0, Math.round(ms));
  const num = (x: number) => String(+x.toFixed(3)).replace('.', u.decimal);
  if (v < 1000) return `${v} ${u.ms}`;
  if (v < 60_000) return `${num(v / 1000)} ${u.s}`;
  const min = Math.floor(v / 60_000);
  const s = (v % 60_000) / 1000;
  return s ? `${min} ${u.min} ${num(s)} ${u.s}` : `${min} ${u.min}`;
}

/** psql's labels for the fields of an ErrorResponse/NoticeResponse. */
const FIELD_LABELS = [
  ['detail', 'DETAIL'],
  ['hint', 'HINT'],
  ['context', 'CONTEXT'],
] as const;

/** One printed line of a PostgreSQL message: a label ("ERROR", "DETAIL", …) and its text. */
export interface PgMessageLine {
  label: string;
  text: string;
}

/**
 * The lines psql prints for an error or notice: "ERROR:  msg", "DETAIL:  …", "HINT:  …",
 * "CONTEXT:  …", then the SQLSTATE. Multi-line fields keep their extra lines unlabelled.
 */
export function pgMessageLines(msg: PgMessage): PgMessageLine[] {
  const lines: PgMessageLine[] = [];
  const push = (label: string, text: string) => {
    const [first, ...rest] = text.split('\n');
    lines.push({ label, text: first });
    for (const r of rest) lines.push({ label: '', text: r });
  };
  // libpq's own errors (no server severity, no SQLSTATE) print as bare text, as psql shows them.
  if (!msg.severity && !msg.sqlstate) {
    push('', msg.message);
    return lines;
  }
  push(msg.severity || 'ERROR', msg.message);
  for (const [key, label] of FIELD_LABELS) {
    const v = msg[key];
    if (v) push(label, v);
  }
  if (msg.sqlstate) lines.push({ label: 'SQLSTATE', text: msg.sqlstate });
  return lines;
}

/** The whole message as psql prints it (two spaces after each label). */
export function pgMessageText(msg: PgMessage): string {
  return pgMessageLines(msg)
    .map((l) => (l.label ? `${l.label}:  ${l.text}` : l.text))
    .join('\n');
}

/** Joins names as "A", "A and B"-neutral list: "A, B". */
export function nameList(names: readonly string[]): string {
  return names.join(', ');
}
