import { describe, expect, it } from 'vitest';
import type { EngineSnapshot, SessionSnapshot } from '../../engine/types';
import type { ScriptItem } from '../backend';
import { wideSessions } from './layout';

const LONG = 'SELECT locktype, relation::regclass, mode, granted, pid FROM pg_locks WHERE pid <> pg_backend_pid() ORDER BY pid';

function snap(names: string[], wideResult: string[] = []): EngineSnapshot {
  const sessions = names.map(
    (name) =>
      ({
        name,
        pending: null,
        last: wideResult.includes(name) ? { step: 'x', results: [{ columns: ['a', 'b', 'c', 'd', 'e'] }], notices: [] } : null,
      }) as unknown as SessionSnapshot,
  );
  return { sessions } as unknown as EngineSnapshot;
}

function step(session: string, sql: string): ScriptItem {
  return { kind: 'step', session, sql } as unknown as ScriptItem;
}

describe('wideSessions', () => {
  const cases: { name: string; script: ScriptItem[]; sessions: string[]; wideResult?: string[]; want: string[] }[] = [
    { name: 'short statements: no full rows', script: [step('A', 'BEGIN;'), step('B', 'BEGIN;')], sessions: ['A', 'B'], want: [] },
    {
      name: 'a long statement line gives its pane a row, and the one pane left beside it too',
      script: [step('A', 'BEGIN;'), step('B', LONG)],
      sessions: ['A', 'B'],
      want: ['A', 'B'],
    },
    {
      name: 'two narrow panes left share their row',
      script: [step('A', 'BEGIN;'), step('B', 'BEGIN;'), step('O', LONG)],
      sessions: ['A', 'B', 'O'],
      want: ['O'],
    },
    {
      name: 'a result wider than four columns',
      script: [step('A', 'BEGIN;'), step('B', 'BEGIN;'), step('C', 'BEGIN;')],
      sessions: ['A', 'B', 'C'],
      wideResult: ['C'],
      want: ['C'],
    },
    { name: 'a lone session stays as it is', script: [step('A', LONG)], sessions: ['A'], want: ['A'] },
  ];
  for (const c of cases)
    it(c.name, () => {
      expect([...wideSessions(c.script, snap(c.sessions, c.wideResult))].sort()).toEqual(c.want);
    });
});
