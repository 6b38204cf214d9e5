import { afterEach, describe, expect, it } from 'vitest';
import { Router } from './router.svelte';

const nextTask = () => new Promise((r) => setTimeout(r, 0));

describe('Router', () => {
  let stop: (() => void) | null = null;
  afterEach(() => {
    stop?.();
    stop = null;
    history.replaceState(null, '', '#/');
  });

  it('step sync rewrites the URL of the current route', async () => {
    history.replaceState(null, '', '#/lessons/a/step/0');
    const router = new Router();
    stop = router.start();
    router.replace({ name: 'lesson', id: 'a', step: 3 });
    expect(location.hash).toBe('#/lessons/a/step/3');
    expect(router.route).toEqual({ name: 'lesson', id: 'a', step: 3 });
    await nextTask();
    expect(router.route).toEqual({ name: 'lesson', id: 'a', step: 3 });
  });

  it('a step sync that lands before the hashchange of a new navigation does not undo the navigation', async () => {
    history.replaceState(null, '', '#/lessons/a/step/2');
    const router = new Router();
    stop = router.start();
    location.hash = '#/lessons/b';
    // The engine answers for lesson a before the browser delivers the hashchange.
    router.replace({ name: 'lesson', id: 'a', step: 3 });
    expect(location.hash).toBe('#/lessons/b');
    expect(router.route).toEqual({ name: 'lesson', id: 'b', step: 0 });
    await nextTask();
    expect(location.hash).toBe('#/lessons/b');
    expect(router.route).toEqual({ name: 'lesson', id: 'b', step: 0 });
  });
});
