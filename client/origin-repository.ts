import { resolve } from 'node:path';
import { simpleGit } from 'simple-git';
import { UsageError } from '../present/terminal/usage-error.js';

/** How the control plane names and fetches the repository a submit comes from. */
export interface OriginRepository {
  /** `owner/name`: GitHub's, else the URL's host (`local` for a path) and its path (DESIGN §6). */
  repository: string;
  cloneUrl: string;
}

/**
 * Reads a git remote URL as the control plane needs it. GitHub remotes (https or ssh)
 * become `owner/name` fetched over https; other https remotes `host/path`; a local path
 * or `file://` URL `local/<path>`. Other transports are refused: runners fetch over
 * https (or file:// when the control plane allows it).
 */
export function originRepository(remoteUrl: string, cwd: string): OriginRepository {
  const github =
    /^(?:https:\/\/github\.com\/|git@github\.com:|ssh:\/\/git@github\.com\/)([^/]+)\/([^/]+?)(?:\.git)?\/?$/.exec(
      remoteUrl,
    );
  if (github) {
    const [, owner, name] = github as unknown as [string, string, string];
    return { repository: `${owner}/${name}`, cloneUrl: `https://github.com/${owner}/${name}.git` };
  }
  if (remoteUrl.startsWith('https://')) {
    const url = new URL(remoteUrl);
    if (url.username || url.password) {
      throw new UsageError(
        `origin's URL carries credentials; fluksio will not send them (remove them from the remote)`,
      );
    }
    const path = url.pathname.replace(/^\/+|\/+$/g, '').replace(/\.git$/, '');
    // A port joins the owner with "_": ":" is not allowed in a repository name (DESIGN §6).
    return {
      repository: `${url.host.toLowerCase().replace(':', '_')}/${path}`,
      cloneUrl: `${url.origin}${url.pathname}`,
    };
  }
  if (remoteUrl.startsWith('file://') || remoteUrl.startsWith('/') || remoteUrl.startsWith('.')) {
    const path = remoteUrl.startsWith('file://') ? new URL(remoteUrl).pathname : resolve(cwd, remoteUrl);
    return { repository: `local/${path.replace(/^\/+|\/+$/g, '')}`, cloneUrl: `file://${path}` };
  }
  throw new UsageError(
    `origin is ${JSON.stringify(remoteUrl)}: runners fetch over https (or file:// when allowed); add an https remote as origin`,
  );
}

/** HEAD's commit and the URL of the remote "origin" (null when there is none). */
export async function headAndOrigin(repoRoot: string): Promise<{ commit: string; remoteUrl: string | null }> {
  const git = simpleGit({ baseDir: repoRoot });
  const commit = (await git.revparse(['HEAD'])).trim();
  const remoteUrl = ((await git.remote(['get-url', 'origin']).catch(() => '')) || '').trim();
  return { commit, remoteUrl: remoteUrl || null };
}

/**
 * HEAD's commit, after checking it is on origin (a remote-tracking branch contains it):
 * a runner can only fetch what was pushed (DESIGN §5).
 */
export async function pushedHead(
  repoRoot: string,
): Promise<{ commit: string; remoteUrl: string; dirty: boolean }> {
  const { commit, remoteUrl } = await headAndOrigin(repoRoot);
  if (!remoteUrl) throw new UsageError('This repository has no remote "origin" to submit from');
  const git = simpleGit({ baseDir: repoRoot });
  const containing = await git.raw(['branch', '-r', '--contains', commit]);
  if (!containing.split('\n').some((line) => line.trim().startsWith('origin/'))) {
    throw new UsageError(
      `HEAD ${commit.slice(0, 12)} is not on origin: push it first (git push), then submit`,
    );
  }
  const status = await git.raw(['status', '--porcelain', '--untracked-files=no']);
  return { commit, remoteUrl, dirty: status.trim() !== '' };
}
