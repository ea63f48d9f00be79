import type { CliIo } from '../../present/terminal/cli-io.js';
import type { UnreadableManifest } from '../../store/blobs/gc-store.js';

/**
 * What `fluksio gc` says when directory manifests it could not read kept it from deleting
 * blob files (their files are named only inside them): each manifest, whose, and why, on
 * stderr. Returns the exit code: 1 when there were any, else 0.
 */
export function reportUnreadableManifests(
  unreadable: readonly UnreadableManifest[],
  location: string,
  io: CliIo,
): number {
  if (unreadable.length === 0) return 0;
  const lines = unreadable.map(
    ({ digest, repository, reason }) => `  ${digest} (a directory out of ${repository}): ${reason}\n`,
  );
  io.stderr.write(
    `fluksio gc deleted no blob file in ${location}: it could not read ${unreadable.length === 1 ? 'this directory manifest' : `these ${unreadable.length} directory manifests`}, the only place that names their files:\n${lines.join('')}` +
      `Restore ${unreadable.length === 1 ? 'it' : 'them'}, or let gc forget the runs and cache entries that name ${unreadable.length === 1 ? 'it' : 'them'}, and blob files are collected again.\n`,
  );
  return 1;
}
