import { diffParams } from '../../core/experiments/diff-params.js';
import { short } from '../../core/text/format.js';
import { diffMetrics } from '../../schemas/metric-diff.js';
import { BranchName } from '../../schemas/protocol/branch-name.js';
import type { RemoteRunReport } from '../../schemas/protocol/remote-run-report.js';
import type { ControlPlaneClient } from '../../client/control-plane-client.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { UsageError } from '../../present/terminal/usage-error.js';
import { locateProject } from '../../local/locate-project.js';
import { firstParentCommits } from '../../runner/workspace/first-parent-commits.js';
import { resolveRevision } from '../../runner/workspace/resolve-revision.js';
import { localGoals } from './local-goals.js';
import { outputWidth } from '../render/output-width.js';
import { renderRunDiffMarkdown } from '../render/run-diff-markdown.js';
import { renderRunDiffText } from '../render/run-diff-text.js';
import { describeSide, type RunDiffView } from '../render/run-diff-view.js';
import { originRepositoryHere } from './origin-repository-here.js';
import { remoteRunAtRevision, type RemoteRevisionRun } from './remote-run-at-revision.js';
import { resolveRemoteRun } from './resolve-remote-run.js';
import { serverConnection, submitterClient } from '../../client/server-connection.js';

/** How far back a revision's run is looked for, as locally (runAtRevision). */
const REVISION_DEPTH = 200;

/** What one argument named, before a revision is turned into its run. */
type Named =
  | { kind: 'run'; id: string }
  | { kind: 'revision'; revision: string; commits: string[]; branch: string | null };

/** A side of the comparison, and how it was found. */
interface Side {
  report: RemoteRunReport;
  /** Set when the side was named by a git revision (or a branch of the control plane). */
  at: RemoteRevisionRun | null;
}

/**
 * `fluksio diff A [B] --remote`: two runs of the control plane compared as `fluksio diff`
 * compares local ones (params and metrics, only what changed unless `all`). Each of A and
 * B is a run id (or a unique prefix) or a git revision of this clone (`main`, `HEAD~1`, a
 * tag, a SHA), which stands for the control plane's clean, successful run of this
 * pipeline at its commit or its nearest first-parent ancestor (said); a branch this clone
 * does not have stands for that branch's newest such run. A alone: a run against the
 * baseline the control plane fixed for it, or — for a revision — HEAD's run against the
 * revision's. `rev:NAME` and `run:NAME` choose when a name is both. Better and worse
 * follow the goals of the pipeline file here, when there is one.
 */
export async function diffRemoteRuns(
  first: string,
  second: string | undefined,
  options: { json?: boolean; md?: boolean; all?: boolean; pipeline?: string; url?: string },
  io: CliIo,
): Promise<number> {
  const client = submitterClient(serverConnection(options.url, io.env));
  const here = await originRepositoryHere(io.cwd);
  const pipelinePath = await locateProject(options.pipeline, io.cwd).then(
    (project) => project.pipelinePath,
    () => null,
  );
  const notes: string[] = [];
  const resolve = (text: string) => resolveName(client, here?.repoRoot ?? null, text, notes);
  const sideOf = async (named: Named, other: RemoteRunReport | null): Promise<Side> => {
    if (named.kind === 'run') return { report: await client.run(named.id), at: null };
    if (here === null)
      throw new UsageError(
        `"${named.revision}" names no run of the control plane, and a git revision needs a repository with an origin here`,
      );
    const at = await remoteRunAtRevision(client, {
      repository: here.repository,
      pipelinePath,
      revision: named.revision,
      commits: named.commits,
      branch: named.branch,
      paramsDigest: other?.run.paramsDigest,
      excludeRunId: other?.run.id ?? null,
    });
    if (!at) {
      const what = pipelinePath ?? 'any pipeline';
      throw new UsageError(
        named.commits[0] !== undefined
          ? `${named.revision} (${short(named.commits[0], 10)}) and its first-parent ancestors have no clean successful run of ${what} on the control plane`
          : `"${named.revision}" is neither a run of the control plane (see fluksio runs --remote), a git revision here, nor a branch with a clean successful run of ${what} there`,
      );
    }
    return { report: await client.run(at.run.id), at };
  };

  const a = await resolve(first);
  const b = second === undefined ? null : await resolve(second);
  let current: Side;
  let against: Side | null;
  if (a.kind === 'run') {
    current = await sideOf(a, null);
    const baseline = current.report.baseline;
    against =
      b !== null
        ? await sideOf(b, current.report)
        : baseline
          ? { report: await client.run(baseline.id), at: null }
          : null;
  } else if (b === null) {
    // `diff main --remote`, as `git diff main` compares the work tree: HEAD's run against main's.
    current = await sideOf(await resolve('rev:HEAD'), null);
    against = await sideOf(a, current.report);
  } else {
    current = await sideOf(a, null);
    against = await sideOf(b, current.report);
  }
  for (const side of [current, against]) if (side?.at) notes.push(...revisionNotes(side.at));

  const run = current.report;
  const other = against?.report ?? null;
  const view: RunDiffView = {
    title: other
      ? `Run ${describeSide(run.run, current.at?.revision ?? null)} against run ${describeSide(other.run, against?.at?.revision ?? (a.kind === 'run' && b === null ? 'its baseline' : null))}`
      : `Run ${describeSide(run.run, null)} has no baseline on the control plane`,
    notes,
    compared: other !== null,
    params: diffParams(run.run.params, other?.run.params ?? null),
    metrics: diffMetrics(run.metrics, other?.metrics ?? null, await localGoals(options.pipeline, io.cwd)),
    all: Boolean(options.all),
  };
  if (options.json) {
    const ref = (side: Side | null) =>
      side && {
        id: side.report.run.id,
        commit: side.report.run.commit,
        dirty: side.report.run.dirty,
        params: side.report.run.params,
        ...(side.at
          ? { revision: { name: side.at.revision, commit: side.at.commit, behind: side.at.behind } }
          : {}),
      };
    io.stdout.write(
      `${JSON.stringify({ run: ref(current), against: ref(against), params: view.params, diff: view.metrics }, null, 2)}\n`,
    );
  } else if (options.md) io.stdout.write(renderRunDiffMarkdown(view));
  else io.stdout.write(renderRunDiffText(view, outputWidth(io.stdout, io.env)));
  return 0;
}

/**
 * What `text` names: `run:ID` a run, `rev:REV` a revision; otherwise a run of the control
 * plane whose id it starts, else a git revision here (with its first-parent ancestors),
 * else a branch the control plane may know though this clone does not. When it is both a
 * run and a revision, the run wins and a note says how to ask for the revision.
 */
async function resolveName(
  client: ControlPlaneClient,
  repoRoot: string | null,
  text: string,
  notes: string[],
): Promise<Named> {
  const forced = /^(run|rev):(.*)$/.exec(text);
  const [, force, name = text] = forced ?? [];
  const id =
    force === 'rev' || name === '' ? null : await resolveRemoteRun(client, name, { missing: 'null' });
  const commit =
    force === 'run' || name === '' || repoRoot === null ? null : await resolveRevision(repoRoot, name);
  if (id !== null) {
    if (commit && force === undefined)
      notes.push(
        `"${name}" is also a git revision (${short(commit, 10)}); rev:${name} compares that instead.`,
      );
    return { kind: 'run', id };
  }
  if (commit !== null && repoRoot !== null) {
    const commits = await firstParentCommits(repoRoot, commit, REVISION_DEPTH);
    return {
      kind: 'revision',
      revision: name,
      commits: commits.length > 0 ? commits : [commit],
      branch: null,
    };
  }
  if (force !== 'run' && BranchName.safeParse(name).success)
    return { kind: 'revision', revision: name, commits: [], branch: name };
  throw new UsageError(
    force === 'run'
      ? `No run of the control plane matches "${name}" (see fluksio runs --remote)`
      : `"${text}" is neither a run of the control plane (an id or the start of one, see fluksio runs --remote) nor a git revision or branch name`,
  );
}

/** What needs saying of how a revision's run was found: an ancestor's run, a branch's. */
function revisionNotes(at: RemoteRevisionRun): string[] {
  if (at.commit === null)
    return [
      `${at.revision} is not a revision here: its run is the control plane's newest clean successful run of branch ${at.revision}.`,
    ];
  if (at.behind === 0) return [];
  return [
    `${at.revision} (${short(at.commit, 10)}) has no clean successful run on the control plane: its nearest first-parent ancestor with one is ${at.behind} commit${at.behind === 1 ? '' : 's'} back.`,
  ];
}
