import { constants, lstatSync } from 'node:fs';
import { chmod, copyFile, cp, lstat, mkdir, readdir, readlink, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import type { Pipeline } from '../../schemas/pipeline.js';
import { normalizePipelinePath, pathContains } from '../../core/pipeline/pipeline-paths.js';
import type { CodeIndex } from '../keys/code-index.js';
import { createScratchCheckout, type ScratchCheckout } from './scratch-checkout.js';
import { gitOutput } from './git-output.js';
import { resolveWorkspacePath } from './workspace-path.js';
import { repoPathIn, type Workspace } from './workspace.js';

/** A scratch work tree holding what the user's holds, and the pipeline's place in it. */
export interface WorkTreeCopy {
  checkout: ScratchCheckout;
  workspace: Workspace;
}

export interface WorkTreeCopyOptions {
  /** The user's work tree. */
  source: Workspace;
  /** Its code index, read now: HEAD and the paths that differ from it. */
  codeIndex: CodeIndex;
  pipeline: Pipeline;
  /** The folder the copy is made in. */
  under: string;
}

/**
 * A scratch checkout of the work tree as it is, uncommitted changes included: HEAD
 * checked out (`git worktree add`), then every path that differs from it copied over
 * (modified, added, untracked files; deleted ones removed), so a stage in the copy runs
 * the code the user has and keys it alike. Outs are not copied (stages make or restore
 * them). The pipeline's declared deps that git does not carry (ignored data) are copied
 * in too: copied, not linked, so a stage writing into a dep cannot change the user's files
 * (the copy is a reflink where the file system can make one). A submodule the user has
 * checked out is in the copy as the user has it (copySubmodule). Throws when HEAD is
 * unborn (a worktree needs a commit).
 */
export async function checkoutWorkTreeCopy(options: WorkTreeCopyOptions): Promise<WorkTreeCopy> {
  const { source, codeIndex, pipeline } = options;
  if (codeIndex.commit === null) {
    throw new Error('the repository has no commit yet, and a scratch checkout needs one');
  }
  const checkout = await createScratchCheckout(source.repoRoot, codeIndex.commit, {
    under: options.under,
    prefix: 'member-',
  });
  const workspace: Workspace = {
    repoRoot: checkout.root,
    pipelineDir: path.join(checkout.root, source.pipelineDirInRepo),
    pipelineDirInRepo: source.pipelineDirInRepo,
  };
  try {
    const outs = Object.values(pipeline.stages).flatMap((stage) => [...stage.outs, ...stage.metrics]);
    const outPaths = outs.map((out) => repoPathIn(source, out));
    const isOut = (repoPath: string) => outPaths.some((out) => pathContains(out, repoPath));
    const submodules = checkedOutSubmodules(source.repoRoot, codeIndex);
    for (const repoPath of [...codeIndex.changed].sort()) {
      if (!isOut(repoPath) && !submodules.has(repoPath)) {
        await copyPath(source.repoRoot, checkout.root, repoPath);
      }
    }
    for (const [repoPath, commit] of submodules) {
      await copySubmodule(source.repoRoot, checkout.root, repoPath, commit);
    }
    const produced = outs.map(normalizePipelinePath);
    const deps = new Set(
      Object.values(pipeline.stages).flatMap((stage) => stage.deps.map(normalizePipelinePath)),
    );
    for (const dep of deps) {
      if (produced.some((out) => pathContains(out, dep) || pathContains(dep, out))) continue;
      const repoPath = repoPathIn(source, dep);
      if (repoPath === '.') continue;
      // Checked as any read or write of a workspace: no symlink may lead either side outside.
      const from = await resolveWorkspacePath(source.repoRoot, repoPath);
      const to = await resolveWorkspacePath(checkout.root, repoPath);
      if (!(await lstat(from).catch(() => null))) continue;
      // What the commit (or the copied changes) holds stays; what git does not carry is added.
      await cp(from, to, {
        recursive: true,
        force: false,
        errorOnExist: false,
        mode: constants.COPYFILE_FICLONE,
      });
    }
  } catch (error) {
    await checkout.remove();
    throw error;
  }
  return { checkout, workspace };
}

/**
 * The submodules checked out in the work tree (a gitlink of the code index whose folder has
 * a `.git` file naming the repository it shares with the superproject), by repository path,
 * each with the commit it has checked out.
 */
function checkedOutSubmodules(root: string, codeIndex: CodeIndex): Map<string, string> {
  const found = new Map<string, string>();
  for (const [repoPath, id] of codeIndex.files) {
    const commit = /^160000 ([0-9a-f]{40}(?:[0-9a-f]{24})?)(?:\+|$)/.exec(id)?.[1];
    if (commit === undefined) continue;
    if (lstatSync(path.join(root, repoPath, '.git'), { throwIfNoEntry: false })?.isFile()) {
      found.set(repoPath, commit);
    }
  }
  return found;
}

/**
 * Makes the submodule at `repoPath` in `to` hold what it holds in `from`. `git worktree add`
 * checks out no submodule, and a copied folder's `.git` file names the repository by a
 * relative path that leads nowhere from the copy: a stage there would find an empty folder,
 * keyed like the full one (a clean submodule's key is its commit), and store what it made
 * without it for a run in the work tree to restore. So it becomes a clone sharing the
 * submodule's objects, at the commit it has checked out, holding every file the user's has
 * (edited, untracked and ignored ones too): the copy's code index keys it as the work
 * tree's does. Hooks are off, so cloning runs no code of the repository's.
 */
async function copySubmodule(from: string, to: string, repoPath: string, commit: string): Promise<void> {
  const source = path.join(from, repoPath);
  const target = path.join(to, repoPath);
  await rm(target, { recursive: true, force: true });
  await mkdir(path.dirname(target), { recursive: true });
  const hooksOff = ['-c', 'core.hooksPath=/dev/null'];
  await gitOutput(to, [...hooksOff, 'clone', '--quiet', '--shared', '--no-checkout', '--', source, target]);
  // Its index becomes the commit's, its files stay as the copy below leaves them.
  await gitOutput(target, [...hooksOff, 'reset', '--quiet', commit]);
  for (const entry of await readdir(source)) {
    if (entry === '.git') continue;
    await cp(path.join(source, entry), path.join(target, entry), {
      recursive: true,
      verbatimSymlinks: true,
      mode: constants.COPYFILE_FICLONE,
    });
  }
}

/** Makes `repoPath` in `to` what it is in `from`: a file, a symlink, a folder (a nested repository), or nothing. */
async function copyPath(from: string, to: string, repoPath: string): Promise<void> {
  const source = path.join(from, repoPath);
  const target = path.join(to, repoPath);
  const stats = await lstat(source).catch(() => null);
  await rm(target, { recursive: true, force: true });
  if (!stats) return;
  await mkdir(path.dirname(target), { recursive: true });
  if (stats.isSymbolicLink()) await symlink(await readlink(source), target);
  else if (stats.isDirectory()) await cp(source, target, { recursive: true, verbatimSymlinks: true });
  else {
    await copyFile(source, target, constants.COPYFILE_FICLONE);
    await chmod(target, stats.mode & 0o777);
  }
}
