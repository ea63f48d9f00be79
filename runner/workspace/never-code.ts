/** Python bytecode and fluksio's own directory are never code (DESIGN §5), wherever they sit. */
const NEVER_CODE = /(?:^|\/)(?:__pycache__|\.fluksio)(?:\/|$)|\.pyc$/;

/** Whether a repository-relative posix path is Python bytecode or under `.fluksio/`. */
export function isNeverCode(repoPath: string): boolean {
  return NEVER_CODE.test(repoPath);
}
