import { readFileSync, readdirSync } from 'node:fs';
import { parseLesson } from './src/scenario/lesson';
import { findSpoilers } from './src/scenario/spoilers';
for (const f of readdirSync('lessons').filter((f) => f.endsWith('.yaml'))) {
  const l = parseLesson(readFileSync('lessons/' + f, 'utf8'));
  const s = findSpoilers(l);
  console.log(l.id, s.length, s.map((x) => `${x.lang}/${x.field}#${x.checkpoint} ${x.evidence}`).join('; '));
}
