/**
 * Every spec in tests/fuzz/regressions/ once diverged in fuzzing; each is played on real
 * PostgreSQL and on the simulator as `(regression) seed N`. Seeds listed in known.json (with the
 * reason) must STILL diverge, so a fix forces their removal from the list.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { parseSpec } from '../../src/scenario/spec';
import { SimDriver } from '../../src/sim/simDriver';
import { compareOnSim, playOnReal } from './harness';

const dir = join(new URL('.', import.meta.url).pathname, 'regressions');
const files = readdirSync(dir)
  .filter((f) => /^seed-\d+(-long)?\.spec$/.test(f))
  .sort((a, b) => parseInt(a.slice(5)) - parseInt(b.slice(5)));
const known: Record<string, string> = JSON.parse(readFileSync(join(dir, 'known.json'), 'utf8'));

describe('fuzz regressions', () => {
  const sim = new SimDriver();
  afterAll(() => sim.close());

  it('known.json names only existing regression specs', () => {
    for (const f of Object.keys(known)) expect(files, `known.json names a missing file ${f}`).toContain(f);
  });

  for (const file of files) {
    const seed = file.slice(5, -5).replace('-long', ' (--long)');
    it(`(regression) seed ${seed}`, async () => {
      const spec = parseSpec(readFileSync(join(dir, file), 'utf8'));
      const [real] = await playOnReal(inject('pgUrl'), [spec], { lanes: 1, prefix: 'fuzz_regress' });
      const { divergences, report } = await compareOnSim(sim, spec, real);
      if (known[file])
        expect(
          divergences,
          `${file} is a known divergence (${known[file]}) but now matches PostgreSQL: remove it from known.json`,
        ).toBeGreaterThan(0);
      else expect(divergences, report).toBe(0);
    });
  }
});
