/**
 * Reads a CPU profile written by `PROFILE_OUT=… tsx scripts/profile-browser.ts DIST` and splits the
 * main thread's Svelte updates (samples under Svelte's flush) by the innermost app source file on
 * the stack (that file's code plus the Svelte runtime and DOM work it called), and by inclusive time
 * per app source file. Usage: tsx scripts/profile-analyze.ts PROFILE.json DIST
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { sourceMapper, topLines, type CpuProfile } from './cpuProfile';

const p = JSON.parse(readFileSync(process.argv[2], 'utf8')) as CpuProfile;
const mapped = sourceMapper(resolve(process.argv[3] ?? 'dist'));
const memo = new Map<number, { file: string; name: string } | null>();
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
function original(id: number): { file: string; name: string } | null {
  if (memo.has(id)) return memo.get(id)!;
  const f = byId.get(id)!.callFrame;
  const out = mapped(f) ?? { file: `native:${f.functionName || '(anon)'}`, name: f.functionName };
  memo.set(id, out);
  return out;
}
const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
const innermost = new Map<string, number>();
const inclusive = new Map<string, number>();
const incFn = new Map<string, number>();
let flushMs = 0;
let allMs = 0;
p.samples.forEach((id, i) => {
  const dt = (p.timeDeltas[i + 1] ?? 0) / 1000;
  const stack: number[] = [];
  for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) stack.push(n);
  const frames = stack.map(original);
  const top = byId.get(id)!.callFrame.functionName;
  if (top !== '(idle)' && top !== '(program)' && top !== '(garbage collector)') allMs += dt;
  const inFlush = stack.some((n) => byId.get(n)!.callFrame.functionName === 'flush' && /batch\.js$/.test(original(n)?.file ?? ''));
  if (!inFlush) return;
  flushMs += dt;
  const app = frames.find((f) => f && f.file.startsWith('src/') && !f.file.startsWith('src/internal'));
  const self = frames[0]!;
  add(
    innermost,
    `${app?.file ?? '(svelte only)'}  ←  ${self.file.startsWith('src/') && !self.file.startsWith('src/internal') ? 'own' : self.file.startsWith('native:') ? self.file : 'svelte'}`,
    dt,
  );
  for (const f of new Set(frames.filter((f) => f && f.file.startsWith('src/') && !f.file.startsWith('src/internal')).map((f) => f!.file)))
    add(inclusive, f, dt);
  for (const f of new Set(
    frames.filter((f) => f && f.file.startsWith('src/') && !f.file.startsWith('src/internal')).map((f) => `${f!.file} ${f!.name}`),
  ))
    add(incFn, f, dt);
});
console.log(`busy (not idle/program/gc) ${allMs.toFixed(0)} ms; under Svelte's flush ${flushMs.toFixed(0)} ms`);
console.log('flush, by innermost app file ← what ran:\n' + topLines(innermost, 40));
console.log('flush, inclusive by app file:\n' + topLines(inclusive, 30));
console.log('flush, inclusive by app function:\n' + topLines(incFn, 40));
