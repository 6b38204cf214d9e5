import { describe, expect, it } from 'vitest';
import { formatRoute, parseRoute, type Route } from './route';

describe('parseRoute', () => {
  it.each<{ args: string; expected: Route }>([
    { args: '', expected: { name: 'home' } },
    { args: '#/', expected: { name: 'home' } },
    { args: '#/lessons/deadlock-101/step/3', expected: { name: 'lesson', id: 'deadlock-101', step: 3 } },
    { args: '#/lessons/deadlock-101', expected: { name: 'lesson', id: 'deadlock-101', step: 0 } },
    { args: '#/lessons/a%20b/step/0', expected: { name: 'lesson', id: 'a b', step: 0 } },
    { args: '#/lab', expected: { name: 'lab' } },
    { args: '#/interview', expected: { name: 'interview' } },
    { args: '#/retry', expected: { name: 'retry' } },
    { args: '#/retry/', expected: { name: 'retry' } },
    { args: 'retry', expected: { name: 'retry' } },
    { args: '#/retry/run', expected: { name: 'not-found', hash: '#/retry/run' } },
    { args: '#/interview/drill', expected: { name: 'interview-drill' } },
    { args: '#/interview/topics/skip-locked-vs-broker', expected: { name: 'senior-topic', id: 'skip-locked-vs-broker' } },
    { args: '#/interview/topics', expected: { name: 'not-found', hash: '#/interview/topics' } },
    { args: '#/tracks/classroom', expected: { name: 'track', id: 'classroom' } },
    { args: '#/challenges', expected: { name: 'challenges' } },
    { args: '#/challenges/fix-lost-update', expected: { name: 'challenges', id: 'fix-lost-update' } },
    { args: '#/challenges/a/b', expected: { name: 'not-found', hash: '#/challenges/a/b' } },
    { args: '#/dev/fixtures', expected: { name: 'dev-fixtures', fixture: 'deadlock', step: -1 } },
    { args: '#/dev/fixtures/nowait/step/2', expected: { name: 'dev-fixtures', fixture: 'nowait', step: 2 } },
    { args: '#/lessons/x/step/-1', expected: { name: 'not-found', hash: '#/lessons/x/step/-1' } },
    { args: '#/nope', expected: { name: 'not-found', hash: '#/nope' } },
    { args: '#/lab?s=abc-_0', expected: { name: 'lab', query: { s: 'abc-_0' } } },
    { args: '#/lab?lesson=classic-deadlock&x=1', expected: { name: 'lab', query: { lesson: 'classic-deadlock' } } },
    { args: '#/lab/?template=transfer-ordered', expected: { name: 'lab', query: { template: 'transfer-ordered' } } },
  ])('$args', ({ args, expected }) => expect(parseRoute(args)).toEqual(expected));

  it.each<Route>([
    { name: 'home' },
    { name: 'lab' },
    { name: 'interview' },
    { name: 'retry' },
    { name: 'interview-drill' },
    { name: 'senior-topic', id: 'transaction-timeout' },
    { name: 'track', id: 'interview-evening' },
    { name: 'challenges' },
    { name: 'challenges', id: 'break-lost-update' },
    { name: 'lab', query: { s: 'eJzLSM3JyQcABiwCFQ' } },
    { name: 'lesson', id: 'row-locks/intro', step: 4 },
    { name: 'dev-fixtures', fixture: 'skip-locked', step: 1 },
  ])('round-trips %o', (route) => expect(parseRoute(formatRoute(route))).toEqual(route));
});
