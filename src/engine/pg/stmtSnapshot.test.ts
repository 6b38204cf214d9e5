import { describe, expect, it } from 'vitest';
import { snapshotSees } from './stmtSnapshot';

describe('snapshotSees', () => {
  // An exported snapshot file as ExportSnapshot writes it: 740 and 743 running, a subtransaction 744.
  const content = 'vxid:3/5\npid:1\ndbid:5\niso:2\nro:0\nxmin:740\nxmax:746\nxcnt:2\nxip:740\nxip:743\nsof:0\nsxcnt:1\nsxp:744\nrec:0\n';
  const cases: { name: string; xid: number; expected: boolean }[] = [
    { name: 'a transaction ended before xmin', xid: 739, expected: true },
    { name: 'a running transaction', xid: 740, expected: false },
    { name: 'one ended between xmin and xmax', xid: 741, expected: true },
    { name: 'a running subtransaction', xid: 744, expected: false },
    { name: 'one that started after the snapshot', xid: 746, expected: false },
  ];
  for (const c of cases)
    it(c.name, () => {
      const input = structuredClone(c);
      expect(snapshotSees(content, c.xid)).toBe(c.expected);
      expect(c).toEqual(input);
    });
});
