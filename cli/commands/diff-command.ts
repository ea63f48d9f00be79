import { diffParams } from '../../core/experiments/diff-params.js';
import { diffMetrics } from '../../schemas/metric-diff.js';
import type { Run } from '../../schemas/tables/runs.js';
import { short } from '../../core/text/format.js';
import { listRuns } from '../../store/runs/list-runs.js';
import { AmbiguousRunPrefixError } from '../../store/runs/ambiguous-run-prefix-error.js';
import { findRun } from '../../store/runs/find-run.js';
import { resolveRevision } from '../../runner/workspace/resolve-revision.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { UsageError } from '../../present/terminal/usage-error.js';
import { baselineOf, openProjectStore, type ProjectStore } from '../../local/open-project-store.js';
import { runAtRevision, type RevisionRun } from '../../local/run-at-revision.js';
import { outputWidth } from '../render/output-width.js';
import { renderRunDiffMarkdown } from '../render/run-diff-markdown.js';
import { renderRunDiffText } from '../render/run-diff-text.js';
import { describeSide, type RunDiffView } from '../render/run-diff-view.js';

export interface DiffCommandOptions {
  json?: boolean;
  /** `--md`: GitHub-flavoured markdown, for a pull request. */
  md?: boolean;
  /** `--all`: every param and metric, not only those that changed. */
  all?: boolean;
  pipeline?: string;
  /** `--remote`: runs of the control plane at FLUKSIO_URL. */
  remote?: boolean;
  /** `--url`: runs of the control plane at this URL. */
  url?: string;
}

/** What one argument of `fluksio diff` named, before a revision is turned into its run. */
type Named = { kind: 'run'; run: Run } | { kind: 'revision'; revision: string; commit: string };

/** A side of the comparison, and how it was found. */
interface Side {
  run: Run;
  /** Set when the side was named by a git revision. */
  at: RevisionRun | null;
}

/**
 * `fluksio diff A [B]`: two runs' params and metrics, only what changed unless `--all`.
 * Each of A and B is a run id (or a unique prefix) or a git revision (`main`, `HEAD~1`,
 * a tag, a SHA): a revision stands for its clean, successful run, or its nearest
 * first-parent ancestor's (said). A alone: a run against its baseline, or — for a
 * revision — this workspace's newest run against that revision's run. A name that is both
 * a run id prefix and a revision is the run; `rev:NAME` forces the revision, `run:NAME`
 * the run.
 */
export async function diffCommand(
  first: string,
  second: string | undefined,
  options: DiffCommandOptions,
  io: CliIo,
): Promise<number> {
  if (options.json && options.md) throw new UsageError('--json, --md: choose one output format');
  if (options.remote || options.url !== undefined) {
    const { diffRemoteRuns } = await import('../remote/diff-remote-runs.js');
    return diffRemoteRuns(first, second, options, io);
  }
  const store = await openProjectStore(options.pipeline, io);
  try {
    const notes: string[] = [];
    const a = await resolveName(store, first, notes);
    const b = second === undefined ? null : await resolveName(store, second, notes);
    let current: Side;
    let against: Side | null;
    if (a.kind === 'run') {
      current = { run: a.run, at: null };
      against =
        b === null
          ? await baselineOf(store, a.run).then((run) => run && { run, at: null })
          : await sideOf(store, b, current.run);
    } else if (b === null) {
      // `diff main`, as `git diff main` compares the work tree: this workspace's newest run against main's.
      const [newest] = await listRuns({
        db: store.state.db,
        pipelinePath: store.project.pipelinePath,
        limit: 1,
      });
      if (!newest)
        throw new UsageError(`No runs yet for ${store.project.displayPath}: start one with "fluksio run"`);
      current = { run: newest, at: null };
      against = await sideOf(store, a, newest);
    } else {
      current = await sideOf(store, a, null);
      against = await sideOf(store, b, current.run);
    }
    for (const side of [current, against])
      if (side?.at && side.at.behind > 0) notes.push(behindNote(side.at));

    const view: RunDiffView = {
      title: against
        ? `Run ${describeSide(current.run, current.at?.revision ?? (b === null && a.kind === 'revision' ? 'the newest here' : null))} against run ${describeSide(against.run, against.at?.revision ?? (b === null && a.kind === 'run' ? 'its baseline' : null))}`
        : `Run ${describeSide(current.run, null)} has no baseline: no earlier clean successful run on its commit or its ancestors`,
      notes,
      compared: against !== null,
      params: diffParams(current.run.params, against?.run.params ?? null),
      metrics: diffMetrics(current.run.metrics, against?.run.metrics ?? null, store.goals),
      all: Boolean(options.all),
    };
    if (options.json) {
      const ref = (side: Side | null) =>
        side && {
          id: side.run.id,
          commit: side.run.commit,
          dirty: side.run.dirty,
          params: side.run.params,
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
  } finally {
    await store.state.close();
  }
}

/**
 * What `text` names: `run:ID` a run, `rev:REV` a revision; otherwise a run whose id it
 * starts, else a revision, else nothing (exit 2). When it is both, the run wins and a note
 * says how to ask for the revision.
 */
async function resolveName(store: ProjectStore, text: string, notes: string[]): Promise<Named> {
  const forced = /^(run|rev):(.*)$/.exec(text);
  const [, force, name = text] = forced ?? [];
  const repoRoot = store.project.workspace.repoRoot;
  const run = force === 'rev' || name === '' ? null : await findRunNamed(store, name);
  const commit = force === 'run' || name === '' ? null : await resolveRevision(repoRoot, name);
  if (run) {
    if (commit && force === undefined)
      notes.push(
        `"${name}" is also a git revision (${short(commit, 10)}); rev:${name} compares that instead.`,
      );
    return { kind: 'run', run };
  }
  if (commit) return { kind: 'revision', revision: name, commit };
  throw new UsageError(
    force === 'run'
      ? `No run matches "${name}" (see fluksio runs)`
      : force === 'rev'
        ? `"${name}" is not a git revision here (a branch, tag or commit)`
        : `"${text}" is neither a run (an id or the start of one, see fluksio runs) nor a git revision here (a branch, tag or commit)`,
  );
}

async function findRunNamed(store: ProjectStore, idOrPrefix: string): Promise<Run | null> {
  try {
    return await findRun({ db: store.state.db, idOrPrefix });
  } catch (error) {
    if (error instanceof AmbiguousRunPrefixError) throw new UsageError(error.message, { cause: error });
    throw error;
  }
}

/** A named side as a run: a revision's run (one with `other`'s params preferred); UsageError when it has none. */
async function sideOf(store: ProjectStore, named: Named, other: Run | null): Promise<Side> {
  if (named.kind === 'run') return { run: named.run, at: null };
  const at = await runAtRevision(store, {
    revision: named.revision,
    commit: named.commit,
    paramsDigest: other?.paramsDigest ?? '',
    excludeRunId: other?.id ?? '',
  });
  if (!at)
    throw new UsageError(
      `${named.revision} (${short(named.commit, 10)}) and its first-parent ancestors have no clean successful run of ${store.project.displayPath}`,
    );
  return { run: at.run, at };
}

function behindNote(at: RevisionRun): string {
  return `${at.revision} (${short(at.commit, 10)}) has no clean successful run: its nearest first-parent ancestor with one is ${at.behind} commit${at.behind === 1 ? '' : 's'} back.`;
}
