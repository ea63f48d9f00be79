import { expect, test } from 'vitest';
import { MultiStringSearch } from '../../runner/output/multi-string-search.js';

/** What `indexOf` finds, pattern by pattern: the answer the search must give, sorted. */
function byIndexOf(patterns: readonly string[], text: string): [number, number][] {
  const found: [number, number][] = [];
  for (const pattern of new Set(patterns.filter((each) => each !== ''))) {
    for (let at = text.indexOf(pattern); at !== -1; at = text.indexOf(pattern, at + 1)) {
      found.push([at, at + pattern.length]);
    }
  }
  return sorted(found);
}

function sorted(ranges: [number, number][]): [number, number][] {
  return ranges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

function searchFor(patterns: readonly string[]): MultiStringSearch {
  const search = new MultiStringSearch();
  for (const pattern of patterns) search.add(pattern);
  return search;
}

/** Deterministic pseudo-random integers below `bound` (a linear congruential generator). */
function numbers(seed: number): (bound: number) => number {
  let state = seed;
  return (bound) => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state % bound;
  };
}

test.each([
  {
    patterns: ['needle-in-hay'],
    text: 'hay needle-in-hay hay needle-in-hay',
    found: [
      [4, 17],
      [22, 35],
    ],
  },
  {
    patterns: ['abababab'],
    text: 'abababababab',
    found: [
      [0, 8],
      [2, 10],
      [4, 12],
    ],
  },
  {
    patterns: ['aaaaaaaaa', 'aaa'],
    text: 'aaaaaaaaaa',
    found: [[0, 9], [1, 10], ...[...Array(8).keys()].map((at) => [at, at + 3])],
  },
  { patterns: ['at-the-very-end'], text: 'x at-the-very-end', found: [[2, 17]] },
  { patterns: ['😀 emoji 😀'], text: 'an 😀 emoji 😀!', found: [[3, 14]] },
  { patterns: ['', 'absent-pattern'], text: 'nothing here', found: [] },
])('$patterns in "$text"', ({ patterns, text, found }) => {
  expect(sorted(searchFor(patterns).occurrences(text))).toEqual(sorted(found as [number, number][]));
});

test('finds exactly what indexOf finds, with a few patterns and with many, short and long, overlapping', () => {
  const next = numbers(20261203);
  for (let trial = 0; trial < 2000; trial++) {
    // Small alphabets make patterns overlap, repeat and share their grams.
    const alphabet = ['ab', 'abc', 'aé😀b'][trial % 3] ?? 'ab';
    const word = (length: number) => Array.from({ length }, () => alphabet[next(alphabet.length)]).join('');
    const patterns = Array.from({ length: 1 + next(trial % 2 === 0 ? 6 : 60) }, () => word(1 + next(16)));
    const text = word(next(300));
    expect(sorted(searchFor(patterns).occurrences(text)), `${patterns} in ${text}`).toEqual(
      byIndexOf(patterns, text),
    );
  }
});

test('the longest pattern and the count are kept, duplicates counted once', () => {
  const search = searchFor(['short', 'a-much-longer-pattern', 'short', '']);
  expect(search.size).toBe(2);
  expect(search.longest).toBe('a-much-longer-pattern'.length);
  expect(new MultiStringSearch().longest).toBe(0);
});
