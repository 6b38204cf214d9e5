import { describe, expect, it } from 'vitest';
import { readableCount } from './format';

describe('readableCount', () => {
  it('keeps small counts exact, grouped as the language groups digits', () => {
    expect(readableCount(20n, 'en')).toBe('20');
    expect(readableCount(123_456_789n, 'en')).toBe('123,456,789');
    expect(readableCount(123_456_789n, 'ru')).toBe('123\u00a0456\u00a0789');
  });

  it('shows huge counts as a rounded power of ten with a localized decimal mark', () => {
    const big = 12n * 10n ** 133n + 345n;
    expect(big.toString()).toHaveLength(135);
    expect(readableCount(big, 'en')).toBe('≈ 1.2 × 10¹³⁴');
    expect(readableCount(big, 'ru')).toBe('≈ 1,2 × 10¹³⁴');
    expect(readableCount(1_000_000_000n, 'en')).toBe('≈ 1.0 × 10⁹');
  });

  it('rounds up across a power of ten', () => {
    expect(readableCount(9_960_000_000n, 'en')).toBe('≈ 1.0 × 10¹⁰');
    expect(readableCount(9_940_000_000n, 'en')).toBe('≈ 9.9 × 10⁹');
  });
});
