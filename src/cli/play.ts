/**
 * `npm run play -- FILE [--perm N] [--text|--json]`: plays an isolationtester spec (or a
 * lesson file) on the simulator and prints the isolationtester's output or JSON traces.
 */
import { formatText, runSpec, toTraces } from '../scenario/isolation';
import { SimDriver } from '../sim/simDriver';
import type { Spec } from '../scenario/types';
import { loadScenario } from './load';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const file = args.find((a) => !a.startsWith('--') && !/^\d+$/.test(a));
  if (!file) {
    console.error('usage: npm run play -- FILE [--perm N] [--text|--json]');
    process.exit(2);
  }
  const permArg = args.indexOf('--perm');
  const permutation = permArg >= 0 ? Number(args[permArg + 1]) : undefined;
  const json = args.includes('--json');
  let spec: Spec;
  try {
    spec = await loadScenario(file);
  } catch (e) {
    console.error(`${file}: ${(e as Error).message}`);
    process.exit(2);
  }
  const driver = new SimDriver();
  try {
    const runs = await runSpec(spec, driver, permutation ? { permutation } : {});
    if (json) console.log(JSON.stringify({ permutations: toTraces(runs) }, null, 2));
    else process.stdout.write(formatText(spec, runs));
  } finally {
    await driver.close();
  }
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
