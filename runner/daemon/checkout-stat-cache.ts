import { rm } from 'node:fs/promises';
import { listingSnapshotFile } from '../workspace/listing-snapshot.js';

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

/** Removes a checkout's stat cache and the listing snapshot kept with it. */
export async function removeCheckoutStatCache(checkout: string): Promise<void> {
  const file = checkoutStatCache(checkout);
  await Promise.all([rm(file, { force: true }), rm(listingSnapshotFile(file), { force: true })]);
}
