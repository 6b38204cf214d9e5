import { describe, expect, it, vi } from 'vitest';
import { flushSync } from 'svelte';
import { LessonPlayer } from './lessonPlayer.svelte';
import { fixtureBackend } from './fixtures/backend';
import { deadlockScenario } from './fixtures/deadlock';
import type { PlayerBackend } from './backend';
import { guidedBackend } from './fixtures/guided';

describe('LessonPlayer', () => {
  it('serializes calls: rapid next() presses each advance one step, in order', async () => {
    const p = new LessonPlayer(fixtureBackend(deadlockScenario));
    await p.open({ kind: 'lesson', id: 'deadlock' });
    await Promise.all([p.next(), p.next(), p.next()]);
    expect(p.cursor).toBe(3);
    await p.prev();
    expect(p.cursor).toBe(2);
  });

  it('rapid prev() presses each undo one step and stop at the start (no goto below 0)', async () => {
    const backend = fixtureBackend(deadlockScenario);
    const asked: number[] = [];
    const p = new LessonPlayer({ ...backend, goto: (c) => (asked.push(c), backend.goto(c)) });
    await p.open({ kind: 'lesson', id: 'deadlock' }, 2);
    asked.length = 0;
    await Promise.all([p.prev(), p.prev(), p.prev()]);
    expect(asked).toEqual([1, 0]);
    expect(p.cursor).toBe(0);
    expect(p.failure).toBeNull();
  });

  it('shares each new state with the previous one: unchanged parts keep their objects, changed ones are new', async () => {
    const p = new LessonPlayer(fixtureBackend(deadlockScenario));
    await p.open({ kind: 'lesson', id: 'deadlock' });
    const before = p.state!;
    await p.next();
    const after = p.state!;
    expect(after).not.toBe(before);
    expect(after.cursor).toBe(1);
    expect(after.script).toBe(before.script);
    // The fixture's step changes session A only: B's pane gets the same object, A's a new one.
    const [a0, b0] = before.snapshot.sessions;
    const [a1, b1] = after.snapshot.sessions;
    expect(JSON.stringify(b1)).toBe(JSON.stringify(b0));
    expect(b1).toBe(b0);
    expect(JSON.stringify(a1)).not.toBe(JSON.stringify(a0));
    expect(a1).not.toBe(a0);
  });

  it('opens at a given cursor and knows start and end', async () => {
    const p = new LessonPlayer(fixtureBackend(deadlockScenario));
    await p.open({ kind: 'lesson', id: 'deadlock' }, 10);
    expect(p.cursor).toBe(10);
    expect(p.atEnd).toBe(true);
    await p.next();
    expect(p.cursor).toBe(10);
  });

  it('maps a timeline time back to the first visited step that reached it', async () => {
    const p = new LessonPlayer(fixtureBackend(deadlockScenario));
    await p.open({ kind: 'lesson', id: 'deadlock' });
    for (let i = 0; i < 9; i++) await p.next();
    expect(p.jumpToTime(3100)).toBe(true);
    await vi.waitFor(() => expect(p.cursor).toBe(8));
    expect(p.jumpToTime(99_999)).toBe(false);
  });

  it('plays at the chosen speed and stops at the end', async () => {
    vi.useFakeTimers();
    try {
      const p = new LessonPlayer(fixtureBackend(deadlockScenario));
      await p.open({ kind: 'lesson', id: 'deadlock' }, 8);
      p.setSpeed(4);
      p.play();
      await vi.advanceTimersByTimeAsync(250);
      expect(p.cursor).toBe(9);
      await vi.advanceTimersByTimeAsync(1000);
      flushSync();
      expect(p.cursor).toBe(10);
      expect(p.playing).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });

  it('reports a failed backend call and stops playing', async () => {
    const broken: PlayerBackend = { ...fixtureBackend(), next: () => Promise.reject(new Error('worker died')) };
    const p = new LessonPlayer(broken);
    await p.open({ kind: 'lesson', id: 'deadlock' });
    await p.next();
    expect(p.failure).toBe('worker died');
    expect(p.busy).toBe(false);
  });

  it('holds back an item with an unanswered checkpoint, even under rapid presses, until answered', async () => {
    const p = new LessonPlayer(guidedBackend());
    const answered = new Set<string>();
    p.needsAnswer = (item) => !answered.has(item.predict!.key);
    await p.open({ kind: 'lesson', id: 'deadlock' }, 3);
    await Promise.all([p.next(), p.next(), p.next()]);
    expect(p.cursor).toBe(4);
    expect(p.asking?.index).toBe(4);
    answered.add('a_upd2');
    await p.answered();
    expect(p.cursor).toBe(5);
    expect(p.asking).toBeNull();
    await p.prev();
    await p.next();
    expect(p.cursor).toBe(5);
  });
});
