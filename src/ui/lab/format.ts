/** How the lab words big numbers: exact up to a billion, then "≈ 1.2 × 10¹³⁴", in the UI language. */

const SUPERSCRIPT = '⁰¹²³⁴⁵⁶⁷⁸⁹';
const EXACT_BELOW = 1_000_000_000n;

/** A count for reading: grouped digits when small, a rounded power of ten when huge. */
export function readableCount(n: bigint, lang: string): string {
  if (n < EXACT_BELOW) return new Intl.NumberFormat(lang).format(n);
  const digits = n.toString();
  // Two significant digits, rounded half up from the third, in integers (no float drift).
  let tenths = Math.round(Number(digits.slice(0, 3)) / 10);
  let exp = digits.length - 1;
  if (tenths >= 100) {
    tenths = 10;
    exp += 1;
  }
  const lead = tenths / 10;
  const mantissa = new Intl.NumberFormat(lang, { minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(lead);
  const power = [...String(exp)].map((d) => SUPERSCRIPT[Number(d)]).join('');
  return `≈ ${mantissa} × 10${power}`;
}
