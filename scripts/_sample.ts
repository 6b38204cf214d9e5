import { exploreSpec } from '/work/wt/speed/scripts/bench';
import { SimDriver } from '/work/wt/speed/src/engine/simDriver';
import { exploreBatch } from '/work/wt/speed/src/scenario/explore';
import { exploreReduced } from '/work/wt/speed/src/scenario/por';
const name = process.argv[2];
const spec = exploreSpec(name);
const driver = new SimDriver();
const probe = async () => { await driver.engine!.refreshTables(); return driver.engine!.snapshot().tables.map((t) => ({ name: t.name, columns: t.columns, rows: t.rows.map((r) => r.values) })); };
const r = await exploreReduced(spec, 34650, async (i) => { const b = await exploreBatch(spec, driver, probe, i, 1, { withRuns: true }); return { outcome: b.outcomes[0], run: b.runs![0] }; });
const by = new Map(r.outcomes.map((o) => [o.index, o]));
console.log('ran', r.ran, 'covered', by.size);
let seed = 7; const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
let bad = 0;
for (let k = 0; k < Number(process.argv[3] ?? 150); k++) {
  const i = Math.floor(rnd() * 34650);
  const o = (await exploreBatch(spec, driver, probe, i, 1)).outcomes[0];
  const p = by.get(i)!;
  const same = o.kind === p.kind && (o.kind === 'stalled' || (o.dataHash === p.dataHash && JSON.stringify(o.failures) === JSON.stringify(p.failures)));
  if (!same) { bad++; console.log('MISMATCH', i, o.permutation, 'brute', o.kind, o.victims, 'por', p.kind, p.victims, p.permutation); }
}
console.log('mismatches', bad);
await driver.close();
