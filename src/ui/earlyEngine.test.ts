import { describe, expect, it } from 'vitest';
import { isPlayerRoute } from './earlyEngine';
import { parseRoute } from './model/route';

describe('isPlayerRoute', () => {
  it('starts the engine early exactly on the routes whose player starts it (home, track, lesson)', () => {
    const hashes = [
      '',
      '#',
      '#/',
      '#/tracks/basics',
      '#/tracks/basics/',
      '#/tracks/a/b',
      '#/lessons/classic-deadlock',
      '#/lessons/classic-deadlock/step/3',
      '#/lessons/classic-deadlock/',
      '#/lessons/classic-deadlock/step/3/',
      '#/lessons/classic-deadlock/step/x',
      '#/lessons/classic-deadlock/other',
      '#/lessons/',
      '#/lab',
      '#/lab?s=abc',
      '#/interview',
      '#/interview/drill',
      '#/interview/topics/x',
      '#/retry',
      '#/locks',
      '#/explain',
      '#/challenges',
      '#/challenges/one',
      '#/embed/lessons/classic-deadlock',
      '#/embed/lab?s=abc',
      '#/dev/fixtures',
      '#/nowhere',
    ];
    for (const h of hashes) expect([h, isPlayerRoute(h)]).toEqual([h, ['home', 'track', 'lesson'].includes(parseRoute(h).name)]);
  });
});
