// Regenerates lessons/<id>.expected.txt from a real PostgreSQL 18 run (never by hand).
// Usage: npx tsx scripts/expected.ts lessons/<id>.yaml …   (CHECK=1 compares instead of writing)
import { writeFileSync, readFileSync } from 'node:fs';
import { runSpec, formatText } from '../src/scenario/isolation';
import { PgDriver } from '../src/oracle/pgDriver';
import { startPostgres } from '../src/oracle/server';
import { loadScenario } from '../src/cli/load';
const files = process.argv.slice(2);
const check = process.env.CHECK === '1';
const server = await startPostgres();
const real = new PgDriver(server.url);
let bad = 0;
try {
  for (const f of files) {
    const spec = await loadScenario(f);
    const text = formatText(spec, await runSpec(spec, real));
    const out = f.replace(/\.ya?ml$/, '.expected.txt');
    if (check) {
      const same = readFileSync(out, 'utf8') === text;
      console.log(same ? 'same' : 'DIFFERENT', out);
      if (!same) {
        bad++;
        writeFileSync('/tmp/' + out.split('/').pop() + '.new', text);
      }
    } else {
      writeFileSync(out, text);
      console.log('wrote', out);
    }
  }
} finally {
  await real.close();
  await server.stop();
}
process.exit(bad ? 1 : 0);
