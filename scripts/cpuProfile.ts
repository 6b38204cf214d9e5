/** What the profiling scripts share: Chromium's CPU profile shape, source-mapped frames, and a ranked listing. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SourceMapConsumer } from 'source-map-js';

export interface CpuFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
export interface CpuProfile {
  nodes: { id: number; callFrame: CpuFrame; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * Maps a profile frame of a build in `dist` to its source file and function (`name:line`) through
 * the build's source maps (read once per script); null for a frame no map covers. Paths are
 * shortened: `nm/…` for node_modules, `src/…` for the app.
 */
export function sourceMapper(dist: string): (f: CpuFrame) => { file: string; name: string } | null {
  const maps = new Map<string, SourceMapConsumer | null>();
  return (f) => {
    const file = f.url.split('/').pop() ?? '';
    if (!maps.has(file)) {
      const m = join(dist, 'assets', `${file}.map`);
      maps.set(file, file && existsSync(m) ? new SourceMapConsumer(JSON.parse(readFileSync(m, 'utf8'))) : null);
    }
    const o = maps.get(file)?.originalPositionFor({ line: f.lineNumber + 1, column: f.columnNumber });
    if (!o?.source) return null;
    return {
      file: o.source
        .replace(/^.*node_modules\//, 'nm/')
        .replace(/^(\.\.\/)+/, '')
        .replace(/^.*src\//, 'src/'),
      name: `${o.name ?? f.functionName}:${o.line}`,
    };
  };
}

/** The `k` largest entries of a name → milliseconds map, one line each. */
export function topLines(m: Map<string, number>, k: number): string {
  return [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, k)
    .map(([n, ms]) => `${ms.toFixed(0).padStart(7)} ms  ${n}`)
    .join('\n');
}
