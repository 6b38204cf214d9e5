import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { settled } from './settled';

/** Whether `p` has resolved once pending timers up to now and microtasks have run. */
async function isDone(p: Promise<void>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  await vi.advanceTimersByTimeAsync(0);
  return done;
}

describe('when the service worker registers', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('waits for the engine’s first answer, not for the page’s load alone', async () => {
    let answer: () => void = () => undefined;
    const p = settled(new Promise<void>((ok) => (answer = ok)));
    await vi.advanceTimersByTimeAsync(1000);
    expect(await isDone(p)).toBe(false);
    answer();
    await vi.advanceTimersByTimeAsync(2100);
    expect(await isDone(p)).toBe(true);
  });

  it('registers on a page that opens no engine, 8 s after its load', async () => {
    const p = settled(new Promise<void>(() => undefined));
    await vi.advanceTimersByTimeAsync(7000);
    expect(await isDone(p)).toBe(false);
    await vi.advanceTimersByTimeAsync(3200);
    expect(await isDone(p)).toBe(true);
  });
});
