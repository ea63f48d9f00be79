import { decodeTime, isValid } from 'ulid';
import { describe, expect, it } from 'vitest';
import { newId } from '../../core/new-id.js';

describe('newId', () => {
  it('is a ULID of the time it was made, with random bits that do not repeat across pool refills', () => {
    const before = Date.now();
    // More ids than one pool of random bytes holds (4096 / 16 = 256), so it is refilled.
    const ids = Array.from({ length: 2000 }, () => newId());
    const after = Date.now();
    for (const id of ids) {
      expect(isValid(id)).toBe(true);
      expect(decodeTime(id)).toBeGreaterThanOrEqual(before);
      expect(decodeTime(id)).toBeLessThanOrEqual(after);
    }
    expect(new Set(ids).size).toBe(ids.length);
    // The random part uses the whole alphabet: the 16 random characters of 2,000 ids draw on all 32.
    const randomChars = new Set(ids.flatMap((id) => [...id.slice(10)]));
    expect(randomChars.size).toBe(32);
  });

  it('sorts by the time it is given', () => {
    expect(newId(1_000) < newId(2_000)).toBe(true);
    expect(decodeTime(newId(1_796_227_557_379))).toBe(1_796_227_557_379);
  });
});
