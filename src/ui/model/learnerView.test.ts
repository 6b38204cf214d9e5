import { describe, expect, it } from 'vitest';
import { pauseSessions, withoutSessions } from './learnerView';
import type { ScriptItem } from '../backend';
import { ssiDoomed } from '../fixtures/serializable';
import { session } from '../fixtures/build';
import type { EngineSnapshot } from '../../engine/types';

describe('withoutSessions', () => {
  it('hides a hidden session’s SSI transactions and rw-antidependencies', () => {
    const snap: EngineSnapshot = {
      ...ssiDoomed,
      sessions: [...ssiDoomed.sessions, session('clock', 6199)],
      ssi: {
        transactions: [...ssiDoomed.ssi!.transactions, { session: 'clock', state: 'active', doomed: false, sireadLocks: [] }],
        conflicts: [...ssiDoomed.ssi!.conflicts, { from: 'clock', to: 'A', fromCommitted: false, toCommitted: true }],
      },
    };
    const shown = withoutSessions(snap, new Set(['clock']));
    expect(shown.ssi).toEqual(ssiDoomed.ssi);
    expect(shown.sessions.map((s) => s.name)).toEqual(['A', 'B']);
  });
  it('keeps a snapshot without SSI state without one', () => {
    const { ssi: _ssi, ...rest } = ssiDoomed;
    const snap: EngineSnapshot = { ...rest, sessions: [...ssiDoomed.sessions, session('clock', 6199)] };
    expect('ssi' in withoutSessions(snap, new Set(['clock']))).toBe(false);
  });
});

describe('pauseSessions', () => {
  const item = (index: number, kind: ScriptItem['kind'], session: string): ScriptItem => ({
    index,
    kind,
    session,
    label: `${session} ${index}`,
  });
  it('hides a session that only pauses, whether the script came from a lesson or a spec', () => {
    expect([...pauseSessions({ script: [item(0, 'step', 'A'), item(1, 'pause', 'clock'), item(2, 'step', 'B')] })]).toEqual(['clock']);
  });
  it('keeps a clock session that also runs statements', () => {
    expect(pauseSessions({ script: [item(0, 'pause', 'clock'), item(1, 'step', 'clock')] }).size).toBe(0);
  });
});
