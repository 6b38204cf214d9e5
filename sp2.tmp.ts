import { readFileSync } from 'node:fs';
import { parseLesson } from './src/scenario/lesson';
import { findSpoilers } from './src/scenario/spoilers';
const cases: [string, string][] = [
  ['deadlock-victim-timing', 'The same two transfers, but B closes the cycle later. Now the first waiter is the victim, not the last one.'],
  ['three-way-deadlock', 'Three transfers form a ring. No pair of them deadlocks, yet all three do. The detector follows the whole wait-for graph.'],
  ['nowait', 'SELECT … FOR UPDATE NOWAIT refuses to wait: it fails at once with 55P03.'],
  ['idle-in-transaction', 'A transaction that is idle in transaction keeps all its row locks until the timeout ends it.'],
];
for (const [id, en] of cases) {
  const l = parseLesson(readFileSync(`lessons/${id}.yaml`, 'utf8'));
  console.log(id, findSpoilers({ ...l, summary: { en, ru: l.summary.ru } }).map((s) => s.evidence));
}
