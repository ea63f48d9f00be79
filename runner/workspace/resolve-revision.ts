import { gitOutput } from './git-output.js';

/**
 * The commit a git revision names in `repoRoot` (`main`, `HEAD~2`, `v1.0`, a short SHA),
 * or null when it names none. `--end-of-options` keeps a revision starting with `-` from
 * being read as an option.
 */
export async function resolveRevision(repoRoot: string, revision: string): Promise<string | null> {
  try {
    const out = await gitOutput(repoRoot, [
      'rev-parse',
      '--verify',
      '--quiet',
      '--end-of-options',
      `${revision}^{commit}`,
    ]);
    return out.trim() || null;
  } catch {
    return null;
  }
}
