import { constants } from 'node:fs';
import { chmod, copyFile, cp, lstat, mkdir, readlink, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import type { Pipeline } from '../../schemas/pipeline.js';
import { normalizePipelinePath, pathContains } from '../../core/pipeline/pipeline-paths.js';
import type { CodeIndex } from '../keys/code-index.js';
import { createScratchCheckout, type ScratchCheckout } from './scratch-checkout.js';
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
 * (the copy is a reflink where the file system can make one). Submodules are not checked
 * out. Throws when HEAD is unborn (a worktree needs a commit).
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
    for (const repoPath of [...codeIndex.changed].sort()) {
      if (!isOut(repoPath)) await copyPath(source.repoRoot, checkout.root, repoPath);
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
