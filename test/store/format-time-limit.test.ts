import { describe, expect, test } from 'vitest';
import { formatTimeLimit } from '../../core/text/format-time-limit.js';

describe('time limits in reasons read as fluksio.yml writes them', () => {
  test.each([
    [3_600_000, '1h'],
    [6 * 3_600_000, '6h'],
    [86_400_000, '24h'],
    [7 * 86_400_000, '7d'],
    [5_400_000, '1h30m'],
    [90_000, '1m30s'],
    [30_000, '30s'],
    [1_500, '1.5s'],
    [250, '250ms'],
  ])('%i ms is %s', (ms, text) => {
    expect(formatTimeLimit(ms)).toBe(text);
  });
});
