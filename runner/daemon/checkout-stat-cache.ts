/**
 * Where the stat cache of a runner checkout's code index lives (code-index.ts): beside
 * the checkout rather than in its `.fluksio/`, which the `git clean` before each run
 * empties, so that the next run on this runner reads only the files that changed. Outside
 * the checkout, a sandboxed stage (which may write only the checkout) cannot forge its
 * entries either. It goes wherever its checkout goes.
 */
export function checkoutStatCache(checkout: string): string {
  return `${checkout}.code-stat-cache`;
}
