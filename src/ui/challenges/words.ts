/** Challenge verdicts in the learner's words (pure; the dictionaries are src/ui/i18n). */
import { isStall, type InterleavingOutcome } from '../../scenario/explore';
import type { Condition, FixFault } from '../../scenario/challenge';
import type { Messages } from '../i18n';

type Words = Messages['challenges'];

/** One line per thing that happened in an order: deadlock, errors, waits, the invariant. */
export function outcomeLines(o: InterleavingOutcome, t: Words): string[] {
  const lines: string[] = [];
  if (o.victims.length) lines.push(t.outcome.deadlock(o.victims.join(', ')));
  const errors = o.failures.filter((f) => f.sqlstate !== '40P01' && !isStall(f));
  if (errors.length) lines.push(t.outcome.error(errors.map((f) => `${f.session} ${f.sqlstate} (${f.message})`).join('; ')));
  if (o.waited.length) lines.push(t.outcome.waited(o.waited.join(', ')));
  if (o.invariant !== undefined) lines.push(o.invariant ? t.outcome.invariantHolds : t.outcome.invariantBroken);
  return lines;
}

/** A goal or failure condition in words. */
export function conditionWords(c: Condition, t: Words): string {
  switch (c.kind) {
    case 'deadlock':
      return t.condition.deadlock(c.victim ?? '');
    case 'error':
      return t.condition.error(c.sqlstate, c.session ?? '');
    case 'invariant-broken':
      return t.condition.invariantBroken;
    case 'waited':
      return t.condition.waited(c.sessions.join(', '));
  }
}

/** Why an order fails a fix, in words. */
export function faultWords(f: FixFault, t: Words): string {
  if (f.kind === 'condition') return `${t.fault.condition} ${conditionWords(f.condition, t)}`;
  if (f.kind === 'error') return t.fault.error(f.session, f.sqlstate, f.message);
  return t.fault.invariant;
}
