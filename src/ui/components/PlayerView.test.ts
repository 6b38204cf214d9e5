import { describe, expect, it } from 'vitest';
import { render, screen, waitFor } from '@testing-library/svelte';
import PlayerView from './PlayerView.svelte';
import { LessonPlayer } from '../lessonPlayer.svelte';
import type { LessonMeta, PlayerBackend, PlayerState, ScriptItem } from '../backend';
import type { EngineSnapshot } from '../../engine/types';
import { deadlockCycle, deadlockScript } from '../fixtures/deadlock';
import { lock, session } from '../fixtures/build';
import { pauseSessions, withoutSessions } from '../model/learnerView';

/**
 * A lesson compiled with a pause: the engine plays `pause 2 s` as `SELECT pg_sleep(2)` in the
 * internal `clock` session, which then shows up in the snapshot like any other session.
 */
const clock = session('clock', 4199, { state: 'idle', query: 'SELECT pg_sleep(2);', stateChangeMs: 2000 });
const withClock: EngineSnapshot = {
  ...deadlockCycle,
  sessions: [...deadlockCycle.sessions, clock],
  locks: [...deadlockCycle.locks, lock(clock, 'virtualxid', { virtualxid: '5/1' }, 'ExclusiveLock')],
  timers: [...deadlockCycle.timers, { session: 'clock', kind: 'pg_sleep', atMs: deadlockCycle.clockMs + 500 }],
  events: [
    { type: 'step-start', atMs: 0, session: 'clock', step: 'clock1', sql: 'SELECT pg_sleep(2);' },
    { type: 'step-done', atMs: 2000, session: 'clock', step: 'clock1', ok: true },
    ...deadlockCycle.events,
  ],
};
const pauseItem: ScriptItem = {
  index: 0,
  kind: 'pause',
  session: 'clock',
  step: 'clock1',
  sql: 'SELECT pg_sleep(2);',
  label: 'pause 2 s',
  pauseMs: 2000,
};
const lessonScript: ScriptItem[] = [pauseItem, ...deadlockScript.map((s) => ({ ...s, index: s.index + 1 }))];

function backendFor(state: PlayerState): PlayerBackend {
  const s = async () => state;
  return { open: s, next: s, goto: s, reset: s, runAdHoc: s, advance: s, advanceToNextTimer: s };
}

async function show(state: PlayerState) {
  const player = new LessonPlayer(backendFor(state));
  await player.open({ kind: 'lesson', id: 'x' });
  render(PlayerView, { props: { player, title: 'Pause session' } });
  await waitFor(() => expect(screen.getAllByTestId('session-pane').length).toBeGreaterThan(0));
}
const paneNames = () => screen.getAllByTestId('session-pane').map((p) => p.dataset.session);
const graphNodes = () => screen.getAllByTestId('wfg-node').map((n) => n.dataset.session);
const laneNames = () => [...screen.getByTestId('timeline').querySelectorAll('text.lane')].map((t) => t.textContent);
const heldEntries = () => [...document.querySelectorAll('ul.held li strong')].map((s) => s.textContent);
const lockPids = () => [...screen.getByTestId('lock-table').querySelectorAll('tbody td.pid')].map((td) => td.textContent?.trim());
const timerSessions = () => screen.queryAllByTestId('clock-timer').map((t) => t.dataset.session);

describe('PlayerView: the lessons’ pause session', () => {
  it('hides a lesson’s clock session: no pane, graph node, timeline lane, held modes, pg_locks row or timer', async () => {
    await show({ snapshot: withClock, script: lessonScript, cursor: 8, offScript: false, lesson: { id: 'classic-deadlock' } });
    expect(paneNames()).toEqual(['A', 'B']);
    expect(graphNodes().sort()).toEqual(['A', 'B']);
    expect(laneNames()).toEqual(['A', 'B']);
    expect(heldEntries()).toEqual(['A', 'B']);
    expect(lockPids()).not.toContain('4199');
    expect(lockPids().length).toBe(deadlockCycle.locks.length);
    expect(timerSessions()).not.toContain('clock');
    // The pause itself is still part of the story: the script and clock are untouched.
    expect(screen.getByTestId('step-position').textContent).toBe(`Step 8 of ${lessonScript.length}`);
  });

  it('hides the clock of a lesson opened in the lab (a spec whose clock only pauses)', async () => {
    await show({ snapshot: withClock, script: lessonScript, cursor: 8, offScript: false });
    expect(paneNames()).toEqual(['A', 'B']);
    expect(graphNodes().sort()).toEqual(['A', 'B']);
    expect(laneNames()).toEqual(['A', 'B']);
  });
  it('keeps a session named clock that runs statements: it is the user’s own session', async () => {
    const own: ScriptItem[] = [
      ...lessonScript,
      { index: lessonScript.length, kind: 'step', session: 'clock', step: 'c9', sql: 'SELECT 1;', label: 'clock: SELECT 1;' },
    ];
    await show({ snapshot: withClock, script: own, cursor: 8, offScript: false });
    expect(paneNames()).toEqual(['A', 'B', 'clock']);
    expect(graphNodes()).toContain('clock');
    expect(laneNames()).toContain('clock');
    expect(heldEntries()).toContain('clock');
    expect(lockPids()).toContain('4199');
  });
});

describe('learnerView model', () => {
  it('hides only sessions used for nothing but pauses, in lessons and specs alike', () => {
    expect([...pauseSessions({ script: lessonScript })]).toEqual(['clock']);
    // A session that also runs ordinary steps is never hidden.
    const mixed: ScriptItem[] = [
      ...lessonScript,
      { index: 99, kind: 'step', session: 'clock', step: 'c9', sql: 'SELECT 1;', label: 'clock: SELECT 1;' },
    ];
    expect([...pauseSessions({ script: mixed })]).toEqual([]);
  });
  it('returns the same snapshot when nothing is hidden and never mutates its input', () => {
    expect(withoutSessions(deadlockCycle, new Set(['clock']))).toBe(deadlockCycle);
    const before = JSON.stringify(withClock);
    const out = withoutSessions(withClock, new Set(['clock']));
    expect(JSON.stringify(withClock)).toBe(before);
    expect(out.sessions.map((s) => s.name)).toEqual(['A', 'B']);
    expect(out.events.every((e) => e.type === 'deadlock' || e.session !== 'clock')).toBe(true);
  });
});

describe('PlayerView: a lesson while the engine starts', () => {
  const meta: LessonMeta = {
    id: 'classic-deadlock',
    summary: { en: 'Two transfers lock two rows in opposite orders.' },
    hideUntilEnd: ['pg-locks'],
  };
  const preview = { script: lessonScript, meta };

  it('shows the lesson’s narration, script length and lock matrices before the engine answers, then its sessions', async () => {
    let answer: (s: PlayerState) => void = () => undefined;
    const backend: PlayerBackend = {
      ...backendFor({ snapshot: withClock, script: lessonScript, cursor: 0, offScript: false, lesson: meta }),
      open: () => new Promise<PlayerState>((ok) => (answer = ok)),
    };
    const player = new LessonPlayer(backend);
    const opened = player.open({ kind: 'lesson', id: 'classic-deadlock' });
    render(PlayerView, { props: { player, title: 'Classic deadlock', lessonId: 'classic-deadlock', preview } });
    await waitFor(() => expect(screen.getByTestId('engine-starting')).toBeTruthy());
    expect(screen.getByText('Two transfers lock two rows in opposite orders.')).toBeTruthy();
    expect(screen.getByTestId('step-position').textContent).toBe(`Step 0 of ${lessonScript.length}`);
    expect((screen.getByTestId('step-next') as HTMLButtonElement).disabled).toBe(true);
    expect(screen.queryAllByTestId('session-pane')).toHaveLength(0);
    expect(screen.getAllByTestId('matrix-cell').length).toBeGreaterThan(0);
    answer({ snapshot: withClock, script: lessonScript, cursor: 0, offScript: false, lesson: meta });
    await opened;
    await waitFor(() => expect(screen.queryByTestId('engine-starting')).toBeNull());
    expect(paneNames()).toEqual(['A', 'B']);
    expect((screen.getByTestId('step-next') as HTMLButtonElement).disabled).toBe(false);
  });

  it('does not show another lesson’s state as this one’s while this one opens', async () => {
    const other: PlayerState = { snapshot: withClock, script: lessonScript, cursor: 3, offScript: false, lesson: { id: 'other' } };
    const player = new LessonPlayer(backendFor(other));
    await player.open({ kind: 'lesson', id: 'other' });
    render(PlayerView, { props: { player, title: 'Classic deadlock', lessonId: 'classic-deadlock', preview } });
    await waitFor(() => expect(screen.getByTestId('engine-starting')).toBeTruthy());
    expect(screen.queryAllByTestId('session-pane')).toHaveLength(0);
    expect(screen.getByTestId('step-position').textContent).toBe(`Step 0 of ${lessonScript.length}`);
  });
});
