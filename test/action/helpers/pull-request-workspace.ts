import { execFile } from 'node:child_process';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { makeRepo, type TestRepo } from '../../helpers/make-repo.js';

const run = promisify(execFile);

/** A repository with a pull request, and a job's checkout of it. */
export interface PullRequestWorkspace {
  /** The repository as GitHub holds it: `main`, `refs/pull/<n>/head` and `refs/pull/<n>/merge`. */
  origin: TestRepo;
  /** The job's checkout (a clone of origin), at the merge commit, as actions/checkout leaves it. */
  workspace: string;
  number: number;
  /** The base branch's commit, the pull request's head, and GitHub's merge of the two. */
  base: string;
  head: string;
  merge: string;
  /** Runs git in the workspace. */
  git(...args: string[]): Promise<string>;
  /** A `pull_request` `opened` payload for this pull request in `repository` (a real example, patched). */
  pullRequestEvent(repository: string): unknown;
  /** A `push` payload of `main` at the base commit. */
  pushEvent(repository: string): unknown;
  cleanup(): Promise<void>;
}

type Example = { name: string; examples: Record<string, unknown>[] };
const examples = createRequire(import.meta.url)(
  '@octokit/webhooks-examples/api.github.com/index.json',
) as Example[];
/** The parts of the example payloads that are patched. */
type PushPayload = Record<string, unknown> & { repository: Record<string, unknown> };
type PullRequestPayload = PushPayload & {
  pull_request: Record<string, unknown> & { head: Record<string, unknown>; base: Record<string, unknown> };
};

/** A real payload of GitHub's: the first example of the event, or of the event's action. */
function exampleOf(event: string, action?: string): Record<string, unknown> {
  const found = examples
    .find((each) => each.name === event)
    ?.examples.find((each) => action === undefined || each.action === action);
  if (!found) throw new Error(`@octokit/webhooks-examples has no ${event} ${action ?? ''} example`);
  return found;
}

/**
 * A repository whose `main` holds `files`, a pull request #`number` whose head changes
 * `headFiles`, GitHub's merge commit of the two, and a clone checked out at that merge
 * commit (fetched as actions/checkout fetches `refs/pull/<n>/merge`).
 */
export async function makePullRequestWorkspace(options: {
  files: Record<string, string>;
  headFiles: Record<string, string>;
  number?: number;
}): Promise<PullRequestWorkspace> {
  const number = options.number ?? 7;
  const origin = await makeRepo({ files: options.files });
  const base = (await origin.git('rev-parse', 'HEAD')).trim();
  await origin.git('checkout', '-q', '-b', 'feature');
  for (const [path, content] of Object.entries(options.headFiles)) await origin.write(path, content);
  const head = await origin.commitAll('the change under review');
  await origin.git('checkout', '-q', '--detach', base);
  await origin.git('merge', '-q', '--no-ff', '-m', `Merge ${head} into ${base}`, head);
  const merge = (await origin.git('rev-parse', 'HEAD')).trim();
  await origin.git('update-ref', `refs/pull/${number}/head`, head);
  await origin.git('update-ref', `refs/pull/${number}/merge`, merge);
  await origin.git('checkout', '-q', 'main');

  const workspace = await realpath(await mkdtemp(join(tmpdir(), 'fluksio-workspace-')));
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('GIT_')));
  const git = async (...args: string[]) => (await run('git', args, { cwd: workspace, env })).stdout;
  await git('clone', '-q', origin.dir, '.');
  await git('fetch', '-q', 'origin', `+refs/pull/${number}/merge:refs/remotes/pull/${number}/merge`);
  await git('checkout', '-q', '--detach', merge);

  const repositoryShape = (repository: string) => {
    const [owner = '', name = ''] = repository.split('/');
    return { full_name: repository, name, owner: { login: owner } };
  };
  return {
    origin,
    workspace,
    number,
    base,
    head,
    merge,
    git,
    pullRequestEvent(repository) {
      const example = structuredClone(exampleOf('pull_request', 'opened')) as PullRequestPayload;
      const repo = { ...example.repository, ...repositoryShape(repository) };
      return {
        ...example,
        number,
        repository: repo,
        pull_request: {
          ...example.pull_request,
          number,
          head: { ...example.pull_request.head, sha: head, ref: 'feature', repo },
          base: { ...example.pull_request.base, sha: base, ref: 'main', repo },
        },
      };
    },
    pushEvent(repository) {
      const example = structuredClone(exampleOf('push')) as PushPayload;
      return {
        ...example,
        ref: 'refs/heads/main',
        after: base,
        repository: { ...example.repository, ...repositoryShape(repository) },
      };
    },
    async cleanup() {
      await origin.cleanup();
      await rm(workspace, { recursive: true, force: true });
    },
  };
}
