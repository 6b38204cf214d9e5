/** Where a test or `npm run expected -- --check` leaves new output that differs from an expected file. */

/** `a/b.expected.txt` → `a/b.changed.txt` (any `.expected.<ext>`; otherwise `<path>.changed`). */
export function changedPath(path: string): string {
  return /\.expected\.[^./]+$/.test(path) ? path.replace(/\.expected(\.[^./]+)$/, '.changed$1') : `${path}.changed`;
}
