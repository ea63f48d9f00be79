import { ForbiddenError, ControlPlaneError, refusesEveryRequest } from '../../client/control-plane-errors.js';
import { headAndOrigin, originRepository } from '../../client/origin-repository.js';
import { serverConnection } from '../../client/server-connection.js';
import { TeamCacheClient } from '../../client/team-cache-client.js';
import type { LocalTeamCache } from '../../local/local-team-cache.js';
import { UsageError } from '../../present/terminal/usage-error.js';
import type { DiskBlobStore } from '../../runner/blobs/disk-blob-store.js';
import { TeamBlobStore } from './team-blob-store.js';
import { TeamStageCache } from './team-stage-cache.js';
import { messageOf } from '../../core/text/message-of.js';

export interface OpenTeamCacheOptions {
  /** `--url`; else FLUKSIO_URL. */
  url: string | undefined;
  /** Where FLUKSIO_URL and FLUKSIO_TOKEN are read. */
  env: Readonly<Record<string, string | undefined>>;
  /** The repository's root: its `origin` names it on the control plane, as `fluksio submit` names it. */
  repoRoot: string;
  /** This workspace's blob store, where restored bytes are kept (opened once the run starts). */
  local(): DiskBlobStore;
  /** Says what the run does without the team's cache (a line on stderr). */
  warn(message: string): void;
}

/**
 * Retries of the check made before any stage: a person waits on it, and a control plane
 * that cannot be reached only costs a local run.
 */
const REACH_RETRIES = 1;

/**
 * The team's cache for `fluksio run --remote-cache` (issue 13): the trusted entries the
 * control plane at `--url` or FLUKSIO_URL holds for this repository, read with FLUKSIO_TOKEN
 * (a `read` token is enough). Asked once before any stage: a token the control plane refuses
 * (unknown, revoked, not reaching this repository) is a UsageError — exit 2, nothing runs;
 * a control plane that cannot be reached is a warning, and the run uses this store alone
 * (null). A lookup that fails later is a warning too, and the rest of the run is local.
 */
export async function openTeamCache(options: OpenTeamCacheOptions): Promise<LocalTeamCache | null> {
  const connection = serverConnection(options.url, options.env);
  const { remoteUrl } = await headAndOrigin(options.repoRoot).catch(() => ({ remoteUrl: null }));
  if (!remoteUrl) {
    throw new UsageError(
      '--remote-cache: this repository has no remote "origin" to name it on the control plane (git remote add origin URL)',
    );
  }
  const { repository } = originRepository(remoteUrl, options.repoRoot);
  const client = new TeamCacheClient({ ...connection, repository, retries: REACH_RETRIES });
  try {
    await client.reach();
  } catch (error) {
    if (refusesEveryRequest(error) || error instanceof ForbiddenError) {
      throw new UsageError(
        `--remote-cache: the control plane at ${client.origin} refused: ${error.message}`,
        {
          cause: error,
        },
      );
    }
    const why = error instanceof ControlPlaneError ? error.message : messageOf(error);
    options.warn(
      `the team's cache at ${client.origin} did not answer (${why}); every stage runs or restores here`,
    );
    return null;
  }
  const cache = new TeamStageCache({
    client,
    onUnavailable: (error) =>
      options.warn(
        `the team's cache at ${client.origin} stopped answering (${messageOf(error)}); the rest of the run uses this store alone`,
      ),
    warn: (message) => options.warn(message),
  });
  return {
    cache,
    blobsOf: (entry) => new TeamBlobStore({ client, runId: entry.runId, local: options.local() }),
    pointsOf: (key) => cache.pointsOf(key),
  };
}
