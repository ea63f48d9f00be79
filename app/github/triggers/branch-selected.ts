import picomatch from 'picomatch';

/**
 * Whether `on.push.branches` selects a branch, as GitHub Actions reads such a list: globs
 * in order, a `!` glob excluding what the ones before it included, so
 * `[release/**, '!release/**-alpha']` runs every release branch but the alphas.
 */
export function branchSelected(branch: string, patterns: readonly string[]): boolean {
  let selected = false;
  for (const pattern of patterns) {
    if (pattern.startsWith('!')) {
      if (selected && picomatch.isMatch(branch, pattern.slice(1))) selected = false;
    } else if (!selected && picomatch.isMatch(branch, pattern)) {
      selected = true;
    }
  }
  return selected;
}
