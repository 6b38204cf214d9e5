/**
 * Seeded generator of SERIALIZABLE schedules for differential fuzzing of the SSI port
 * (src/engine/ssi.ts): 2–3 serializable sessions read and write a small schema in random
 * interleavings. Nothing ever waits for a row lock (each session updates only its own rows and
 * inserts only its own keys), so every step completes at once on both sides and the only
 * thing under test is who PostgreSQL cancels, when, and with which reason code.
 *
 * The reads mix plans PostgreSQL picks by itself: sequential scans (relation SIREAD locks),
 * primary-key lookups (index page + tuple locks), reads of rows others change, and reads of an
 * initially empty table whose index has no pages yet (an index relation lock).
 */
import { createRng, randInt, type Rng } from '../../src/retrylab/prng';
import { parseSpec } from '../../src/scenario/spec';
import type { Spec } from '../../src/scenario/types';

const ACCOUNTS = 6;

function pick<T>(rng: Rng, xs: readonly T[]): T {
  return xs[randInt(rng, 0, xs.length - 1)];
}

/** One statement for session `si` of `n` sessions (its own rows: ids ≡ si mod n). */
function statement(rng: Rng, si: number, n: number, k: number): string {
  const own = () => {
    const ids = Array.from({ length: ACCOUNTS }, (_, i) => i + 1).filter((id) => id % n === si);
    return pick(rng, ids);
  };
  const any = () => randInt(rng, 1, ACCOUNTS);
  const grp = () => randInt(rng, 0, 1);
  const key = 100 * (si + 1) + k;
  switch (randInt(rng, 0, 8)) {
    case 0:
      return `SELECT sum(bal) FROM acc WHERE grp = ${grp()};`;
    case 1:
      return `SELECT bal FROM acc WHERE id = ${any()};`;
    case 2:
      return `SELECT count(*) FROM log WHERE grp = ${grp()};`;
    case 3:
      return `SELECT id FROM log WHERE id = ${100 * randInt(rng, 1, n) + randInt(rng, 0, 2)};`;
    case 4:
      return `UPDATE acc SET bal = bal - 1 WHERE id = ${own()};`;
    case 5:
      return `UPDATE acc SET bal = bal + 1 WHERE id = ${own()} AND (SELECT sum(bal) FROM acc WHERE grp = ${grp()}) > 0;`;
    case 6:
      return `INSERT INTO log VALUES (${key}, ${grp()});`;
    case 7:
      return `INSERT INTO log SELECT ${key}, ${grp()} WHERE NOT EXISTS (SELECT 1 FROM log WHERE grp = ${grp()});`;
    default:
      return `UPDATE acc SET grp = 1 - grp WHERE id = ${own()};`;
  }
}

/** The spec for one seed: its text is what a failure report prints. */
export function generateSsi(seed: number): { seed: number; spec: Spec; text: string } {
  const rng = createRng(seed * 7919 + 17);
  const n = randInt(rng, 2, 3);
  const lines: string[] = [
    `# SSI fuzz seed ${seed}`,
    'setup',
    '{',
    '  CREATE TABLE acc (id int PRIMARY KEY, grp int NOT NULL, bal int NOT NULL);',
    `  INSERT INTO acc SELECT g, g % 2, 100 FROM generate_series(1, ${ACCOUNTS}) g;`,
    '  CREATE TABLE log (id int PRIMARY KEY, grp int NOT NULL);',
    '}',
    'teardown { DROP TABLE acc, log; }',
  ];
  const order: string[][] = [];
  for (let si = 0; si < n; si++) {
    const p = `s${si + 1}`;
    lines.push(`session ${p}`, `setup { BEGIN ISOLATION LEVEL SERIALIZABLE; }`);
    const names: string[] = [];
    const count = randInt(rng, 1, 3);
    for (let k = 0; k < count; k++) {
      lines.push(`step ${p}q${k} { ${statement(rng, si, n, k)} }`);
      names.push(`${p}q${k}`);
    }
    const end = rng() < 0.9 ? 'COMMIT' : 'ROLLBACK';
    lines.push(`step ${p}end { ${end}; }`);
    names.push(`${p}end`);
    order.push(names);
  }
  // Three random interleavings, each keeping every session's own order.
  for (let i = 0; i < 3; i++) {
    const queues = order.map((q) => [...q]);
    const perm: string[] = [];
    while (queues.some((q) => q.length)) {
      const live = queues.filter((q) => q.length);
      perm.push(pick(rng, live).shift()!);
    }
    lines.push(`permutation ${perm.join(' ')}`);
  }
  const text = lines.join('\n') + '\n';
  return { seed, spec: parseSpec(text), text };
}
