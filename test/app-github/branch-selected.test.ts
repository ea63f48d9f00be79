import { describe, expect, test } from 'vitest';
import { branchSelected } from '../../app/github/triggers/branch-selected.js';

describe('on.push.branches, read as GitHub Actions reads it', () => {
  test.each<[string, string[], boolean]>([
    ['main', ['main'], true],
    ['feature/x', ['main'], false],
    ['release/1.2', ['release/**'], true],
    // A negation only takes away what an earlier glob gave: alone it selects nothing.
    ['feature/x', ['!main'], false],
    ['main', ['!main'], false],
    ['release/1.2-alpha', ['release/**', '!release/**-alpha'], false],
    ['release/1.2', ['release/**', '!release/**-alpha'], true],
    // Order matters: a later glob includes again.
    ['release/1.2-alpha', ['release/**', '!release/**-alpha', 'release/1.2-alpha'], true],
  ])('%s with %j: %s', (branch, patterns, selected) => {
    expect(branchSelected(branch, patterns)).toBe(selected);
  });
});
