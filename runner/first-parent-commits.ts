import { gitOutput } from './git-output.js';

/**
 * `commit` and its first-parent ancestors, nearest first, at most `limit`: where a
 * baseline is looked for (DESIGN §7). Empty when the commit is unknown here.
 */
export async function firstParentCommits(repoRoot: string, commit: string, limit = 200): Promise<string[]> {
  try {
    const out = await gitOutput(repoRoot, [
      'rev-list',
      '--first-parent',
      `--max-count=${limit}`,
      commit,
      '--',
    ]);
    return out.split('\n').filter((line) => line);
  } catch {
    return [];
  }
}
