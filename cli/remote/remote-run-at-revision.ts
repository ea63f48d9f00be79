import type { ControlPlaneClient } from '../../client/control-plane-client.js';
import { RUN_LIST_COMMITS_MAX, RUN_LIST_MAX, type RunListItem } from '../../schemas/protocol/run-list.js';

/** The control plane's run that stands for a git revision, and how far from it that run was made. */
export interface RemoteRevisionRun {
  /** As the user wrote it: `main`, `HEAD~1`. */
  revision: string;
  /** The commit the revision names here; null for a branch known only to the control plane. */
  commit: string | null;
  run: RunListItem;
  /** 0 when the run is at `commit` (or on the branch); else how many first-parent commits back. */
  behind: number;
}

/**
 * The run of the control plane that stands for a revision, as `fluksio diff main` finds
 * one locally (DESIGN §7): a clean, successful run of every stage of `pipelinePath` at the
 * first of `commits` (the revision's commit and its first-parent ancestors, nearest first,
 * as this clone knows them) that has one; among a commit's runs, one with `paramsDigest`
 * first, then the newest. With no commits (a branch this clone does not have), the newest
 * such run of `branch`. Asks for the commits a page at a time; null when none has one.
 */
export async function remoteRunAtRevision(
  client: ControlPlaneClient,
  query: {
    repository: string;
    pipelinePath: string | null;
    revision: string;
    commits: readonly string[];
    branch: string | null;
    paramsDigest: string | undefined;
    excludeRunId: string | null;
  },
): Promise<RemoteRevisionRun | null> {
  const usable = (run: RunListItem) =>
    !run.dirty &&
    run.selection === null &&
    run.id !== query.excludeRunId &&
    (query.pipelinePath === null || run.pipelinePath === query.pipelinePath);
  const list = (filter: { commits: readonly string[] } | { branch: string }) =>
    client.listRuns({
      repository: query.repository,
      ...(query.pipelinePath === null ? {} : { pipelinePath: query.pipelinePath }),
      status: 'succeeded',
      limit: RUN_LIST_MAX,
      ...filter,
    });
  if (query.commits.length === 0) {
    if (query.branch === null) return null;
    const run = prefer((await list({ branch: query.branch })).filter(usable), query.paramsDigest);
    return run ? { revision: query.revision, commit: null, run, behind: 0 } : null;
  }
  for (let from = 0; from < query.commits.length; from += RUN_LIST_COMMITS_MAX) {
    const page = query.commits.slice(from, from + RUN_LIST_COMMITS_MAX);
    const found = (await list({ commits: page })).filter(usable);
    const nearest = page.find((commit) => found.some((run) => run.commit === commit));
    if (nearest === undefined) continue;
    const run = prefer(
      found.filter((each) => each.commit === nearest),
      query.paramsDigest,
    );
    if (run)
      return {
        revision: query.revision,
        commit: query.commits[0] ?? null,
        run,
        behind: query.commits.indexOf(nearest),
      };
  }
  return null;
}

/** Of runs listed newest first: the newest with `paramsDigest`, else the newest. */
function prefer(runs: readonly RunListItem[], paramsDigest: string | undefined): RunListItem | null {
  return (
    runs.find((run) => paramsDigest !== undefined && run.paramsDigest === paramsDigest) ?? runs[0] ?? null
  );
}
