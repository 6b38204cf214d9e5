import { runSpec, formatText } from '/work/main/src/scenario/isolation';
import { PgDriver } from '/work/main/src/oracle/pgDriver';
import { startPostgres } from '/work/main/src/oracle/server';
import { loadScenario } from '/work/main/src/cli/load';
const server = await startPostgres();
const real = new PgDriver(server.url);
try {
  for (const f of process.argv.slice(2)) {
    const spec = await loadScenario(f);
    console.log(formatText(spec, await runSpec(spec, real)));
  }
} finally {
  await real.close();
  await server.stop();
}
