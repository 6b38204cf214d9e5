/**
 * Normalization of DETAIL texts for comparing runs: process ids → session names,
 * relation OIDs → relation names, transaction ids → "transaction ?".
 */

/** Rewrites a DETAIL the same way for the simulator and for real PostgreSQL. */
export function normalizeDetailText(detail: string, pidNames: ReadonlyMap<number, string>, relNames: ReadonlyMap<string, string>): string {
  return detail
    .replace(/\b([Pp]rocess) (\d+)/g, (m, word: string, pid: string) => {
      const name = pidNames.get(Number(pid));
      return name === undefined ? m : `${word} ${name}`;
    })
    .replace(/\brelation (\d+)/g, (m, oid: string) => {
      const name = relNames.get(oid);
      return name === undefined ? m : `relation ${name}`;
    })
    .replace(/\bvirtual transaction \d+\/\d+/g, 'virtual transaction ?')
    .replace(/\btransaction \d+/g, 'transaction ?')
    .replace(/\bpivot \d+/g, 'pivot ?');
}
