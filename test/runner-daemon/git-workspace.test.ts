import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { runGit } from '../../runner/daemon/git-command.js';
import { GitWorkspace, type CheckoutRequest } from '../../runner/daemon/git-workspace.js';
import { prepareClaimedRun } from '../../runner/daemon/prepare-claimed-run.js';
import { RACY_WINDOW_MS } from '../../runner/keys/stat-cache.js';
import { makeClaim } from './helpers/make-claim.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';

let workDir: string;
let repos: TestRepo[] = [];
beforeEach(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), 'fluksio-runner-'));
});
afterEach(async () => {
  await Promise.all(repos.map((repo) => repo.cleanup()));
  repos = [];
  await rm(workDir, { recursive: true, force: true });
});

async function repoWith(files: Record<string, string>, objectFormat?: 'sha256'): Promise<TestRepo> {
  const repo = await makeRepo({ files, ...(objectFormat ? { objectFormat } : {}) });
  repos.push(repo);
  return repo;
}

const head = async (repo: TestRepo) => (await repo.git('rev-parse', 'HEAD')).trim();

function request(repo: TestRepo, commit: string, extra: Partial<CheckoutRequest> = {}): CheckoutRequest {
  return {
    slot: 0,
    repository: 'local/project',
    cloneUrl: `file://${repo.dir}`,
    fetchRef: null,
    commit,
    extraHeader: null,
    ...extra,
  };
}

const gitIn = (dir: string, ...args: string[]) =>
  execFileSync('git', args, { cwd: dir, env: { PATH: process.env.PATH, HOME: process.env.HOME } })
    .toString()
    .trim();

describe('mirrors and checkouts', () => {
  test('runs reuse the mirror and the slot checkout, each checking out exactly the claimed commit', async () => {
    const repo = await repoWith({ 'train.py': 'print(1)\n', '.gitignore': 'model.bin\n' });
    const first = await head(repo);
    await repo.write('train.py', 'print(2)\n');
    const second = await repo.commitAll('second');
    const workspace = new GitWorkspace({ workDir, environment: process.env });

    const dir = await workspace.checkout(request(repo, first));
    expect(gitIn(dir, 'rev-parse', 'HEAD')).toBe(first);
    const [mirror] = await readdir(path.join(workDir, 'mirrors'));
    const mirrorBorn = (await stat(path.join(workDir, 'mirrors', mirror as string))).birthtimeMs;
    // What a run leaves behind: an ignored out, an untracked file, an edited tracked file.
    await writeFile(path.join(dir, 'model.bin'), 'weights');
    await writeFile(path.join(dir, 'scratch.txt'), 'notes');
    await writeFile(path.join(dir, 'train.py'), 'print("edited")\n');

    expect(await workspace.checkout(request(repo, second))).toBe(dir);
    expect(gitIn(dir, 'rev-parse', 'HEAD')).toBe(second);
    expect(await readFile(path.join(dir, 'train.py'), 'utf8')).toBe('print(2)\n');
    expect(existsSync(path.join(dir, 'model.bin'))).toBe(false);
    expect(existsSync(path.join(dir, 'scratch.txt'))).toBe(false);
    expect(await readdir(path.join(workDir, 'mirrors'))).toEqual([mirror]);
    expect((await stat(path.join(workDir, 'mirrors', mirror as string))).birthtimeMs).toBe(mirrorBorn);

    // Back to the first commit: it is in the mirror already, the checkout is the same one.
    expect(await workspace.checkout(request(repo, first))).toBe(dir);
    expect(await readFile(path.join(dir, 'train.py'), 'utf8')).toBe('print(1)\n');
  });

  test('a checkout keeps its stat cache across runs: the next run reads only the files that changed', async () => {
    const files = Object.fromEntries(
      Array.from({ length: 20 }, (_, i) => [`lib/m${i}.py`, `VALUE = ${i}\n`] as const),
    );
    const repo = await repoWith({
      ...files,
      'fluksio.yml': 'version: 1\nstages:\n  show:\n    cmd: cat lib/m0.py\n',
    });
    const first = await head(repo);
    await repo.write('lib/m0.py', 'VALUE = -1\n');
    const second = await repo.commitAll('second');
    const workspace = new GitWorkspace({ workDir, environment: process.env });
    const prepare = async (commit: string) => {
      const paths = workspace.pathsOf(request(repo, commit));
      const repoRoot = await workspace.checkout(request(repo, commit));
      const claim = makeClaim({ repoDir: repo.dir, commit });
      return prepareClaimedRun({
        repoRoot,
        claim,
        runnerEnvironment: {},
        secrets: {},
        statCacheFile: paths.statCache,
      });
    };

    // A run reads every file once; only files older than the racy window are remembered.
    expect((await prepare(first)).codeIndex.filesRead).toBe(21);
    await vi.waitFor(async () => expect((await prepare(first)).codeIndex.filesRead).toBe(0), {
      timeout: 5 * RACY_WINDOW_MS,
      interval: 200,
    });
    const next = await prepare(second);
    expect(next.codeIndex.commit).toBe(second);
    expect(next.codeIndex.filesRead).toBe(1);
    expect(existsSync(path.join(next.workspace.repoRoot, '.fluksio', 'code-stat-cache'))).toBe(false);
  });

  test('each slot has its own checkout of a repository', async () => {
    const repo = await repoWith({ 'a.txt': 'a\n' });
    const commit = await head(repo);
    const workspace = new GitWorkspace({ workDir, environment: process.env });
    const [one, two] = await Promise.all([
      workspace.checkout(request(repo, commit, { slot: 0 })),
      workspace.checkout(request(repo, commit, { slot: 1 })),
    ]);
    expect(one).not.toBe(two);
    expect(gitIn(two, 'rev-parse', 'HEAD')).toBe(commit);
  });

  test('a commit only on a fetch ref (a fork pull request) is fetched through that ref', async () => {
    const repo = await repoWith({ 'a.txt': 'a\n' });
    await repo.git('checkout', '--quiet', '-b', 'fork');
    await repo.write('a.txt', 'from a fork\n');
    const forkCommit = await repo.commitAll('fork change');
    await repo.git('update-ref', 'refs/pull/7/head', forkCommit);
    await repo.git('checkout', '--quiet', 'main');
    await repo.git('branch', '--quiet', '-D', 'fork');
    const workspace = new GitWorkspace({ workDir, environment: process.env });
    const dir = await workspace.checkout(
      request(repo, forkCommit, { fetchRef: 'refs/pull/7/head', fork: true }),
    );
    expect(gitIn(dir, 'rev-parse', 'HEAD')).toBe(forkCommit);
    expect(await readFile(path.join(dir, 'a.txt'), 'utf8')).toBe('from a fork\n');
  });

  test('a trusted run takes a commit only a pull request reaches from its own fetch ref alone, never by its SHA', async () => {
    const repo = await repoWith({ 'a.txt': 'a\n' });
    await repo.git('checkout', '--quiet', '-b', 'feature');
    await repo.write('a.txt', 'squash-merged, its branch deleted\n');
    const headOnly = await repo.commitAll('on a pull request only');
    await repo.git('update-ref', 'refs/pull/7/head', headOnly);
    await repo.git('checkout', '--quiet', 'main');
    await repo.git('branch', '--quiet', '-D', 'feature');
    const workspace = new GitWorkspace({ workDir, environment: process.env });
    // Submitted by its SHA: anyone can open a pull request, so no trusted run of it.
    await expect(workspace.checkout(request(repo, headOnly))).rejects.toThrow(
      `Commit ${headOnly} is on no branch or tag of local/project, only on a pull request's ref`,
    );
    // The control plane's run of a same-repository pull request names its ref.
    const dir = await workspace.checkout(request(repo, headOnly, { fetchRef: 'refs/pull/7/head' }));
    expect(gitIn(dir, 'rev-parse', 'HEAD')).toBe(headOnly);
  });

  test("GitHub's merge of a same-repository pull request still runs after the base moved on and GitHub remade the merge", async () => {
    const repo = await repoWith({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const base = await head(repo);
    await repo.git('checkout', '--quiet', '-b', 'feature');
    await repo.write('a.txt', 'a teammate’s change\n');
    const featureHead = await repo.commitAll('feature');
    // What a `pull_request` workflow checked out and the action submitted: refs/pull/7/merge then.
    await repo.git('checkout', '--quiet', '--detach', base);
    await repo.git('merge', '--quiet', '--no-ff', '-m', 'Merge pull request #7', featureHead);
    const submitted = await head(repo);
    await repo.git('update-ref', 'refs/pull/7/head', featureHead);
    // Before a runner claims the run, main moves on and GitHub recomputes the merge ref.
    await repo.git('checkout', '--quiet', 'main');
    await repo.write('b.txt', 'main moved on\n');
    await repo.commitAll('main moves on');
    await repo.git('checkout', '--quiet', '--detach', 'main');
    await repo.git('merge', '--quiet', '--no-ff', '-m', 'Merge pull request #7', featureHead);
    await repo.git('update-ref', 'refs/pull/7/merge', await head(repo));
    await repo.git('checkout', '--quiet', 'main');
    const workspace = new GitWorkspace({ workDir, environment: process.env });
    const dir = await workspace.checkout(request(repo, submitted));
    expect(gitIn(dir, 'rev-parse', 'HEAD')).toBe(submitted);

    // A commit that only claims to merge two branch commits, its tree someone else's, does not run.
    await repo.git('checkout', '--quiet', '--detach', submitted);
    await repo.write('a.txt', 'not what the merge of the two holds\n');
    await repo.git('add', 'a.txt');
    const tree = (await repo.git('write-tree')).trim();
    const forged = (
      await repo.git('commit-tree', tree, '-p', base, '-p', featureHead, '-m', 'Merge pull request #8')
    ).trim();
    await repo.git('update-ref', 'refs/pull/8/head', forged);
    await repo.git('checkout', '--quiet', '--force', 'main');
    await expect(workspace.checkout(request(repo, forged, { slot: 1 }))).rejects.toThrow(
      `Commit ${forged} is on no branch or tag of local/project, only on a pull request's ref`,
    );
  });

  test("a trusted run of a branch's older commit fetches the branches alone, never every pull request's refs", async () => {
    const repo = await repoWith({ 'a.txt': 'a\n' });
    const older = await head(repo);
    await repo.write('a.txt', 'main moved on before the claim\n');
    await repo.commitAll('main moves on');
    await repo.git('update-ref', 'refs/pull/1/head', older);
    await repo.git('update-ref', 'refs/pull/1/merge', older);
    const workspace = new GitWorkspace({ workDir, environment: process.env });
    const dir = await workspace.checkout(request(repo, older));
    expect(gitIn(dir, 'rev-parse', 'HEAD')).toBe(older);
    const { mirror } = workspace.pathsOf(request(repo, older));
    expect(gitIn(mirror, 'for-each-ref', '--format=%(refname)', 'refs/fluksio/pull/')).toBe('');
  });

  test('a commit only tags reach (a release branch since deleted) runs as trusted: only writers push tags', async () => {
    const repo = await repoWith({ 'a.txt': 'a\n' });
    await repo.git('checkout', '--quiet', '-b', 'release');
    await repo.write('a.txt', 'release candidate\n');
    const candidate = await repo.commitAll('release candidate');
    await repo.write('a.txt', 'release\n');
    const release = await repo.commitAll('release');
    await repo.git('tag', '-a', '-m', 'v1', 'v1', release);
    await repo.git('checkout', '--quiet', '-');
    await repo.git('branch', '--quiet', '-D', 'release');
    const workspace = new GitWorkspace({ workDir, environment: process.env });
    // The annotated tag's own commit (its peeled line in ls-remote), then one behind it.
    for (const commit of [release, candidate]) {
      const dir = await workspace.checkout(request(repo, commit));
      expect(gitIn(dir, 'rev-parse', 'HEAD')).toBe(commit);
    }
  });

  test('a commit the repository does not have fails with a sentence naming it', async () => {
    const repo = await repoWith({ 'a.txt': 'a\n' });
    const workspace = new GitWorkspace({ workDir, environment: process.env });
    const missing = 'b'.repeat(40);
    await expect(workspace.checkout(request(repo, missing))).rejects.toThrow(
      new RegExp(`Could not fetch commit ${missing} of local/project`),
    );
  });

  test('submodules are checked out at the commits the superproject records', async () => {
    const library = await repoWith({ 'lib.py': 'VERSION = 1\n' });
    const pinned = await head(library);
    await library.write('lib.py', 'VERSION = 2\n');
    await library.commitAll('newer');
    const project = await repoWith({ 'main.py': 'import lib\n' });
    await project.git(
      '-c',
      'protocol.file.allow=always',
      'submodule',
      'add',
      '--quiet',
      `file://${library.dir}`,
      'vendor/lib',
    );
    await project.git('-C', 'vendor/lib', 'checkout', '--quiet', pinned);
    const commit = await project.commitAll('add the library');

    const workspace = new GitWorkspace({ workDir, environment: process.env });
    const dir = await workspace.checkout(request(project, commit));
    expect(await readFile(path.join(dir, 'vendor/lib/lib.py'), 'utf8')).toBe('VERSION = 1\n');
    // A run's leftovers inside the submodule are cleaned too.
    await writeFile(path.join(dir, 'vendor/lib/leftover.txt'), 'x');
    await workspace.checkout(request(project, commit));
    expect(existsSync(path.join(dir, 'vendor/lib/leftover.txt'))).toBe(false);
  });

  test('a SHA-256 repository is mirrored and checked out as one', async () => {
    const repo = await repoWith({ 'a.txt': 'a\n' }, 'sha256');
    const commit = await head(repo);
    expect(commit).toHaveLength(64);
    const dir = await new GitWorkspace({ workDir, environment: process.env }).checkout(request(repo, commit));
    expect(gitIn(dir, 'rev-parse', 'HEAD')).toBe(commit);
  });

  test('lock files a killed runner left in the mirror and the checkout do not fail later runs', async () => {
    const repo = await repoWith({ 'a.txt': 'a\n' });
    const first = await head(repo);
    const workspace = new GitWorkspace({ workDir, environment: process.env });
    const dir = await workspace.checkout(request(repo, first));
    const [mirror] = await readdir(path.join(workDir, 'mirrors'));
    await writeFile(path.join(dir, '.git', 'index.lock'), '');
    await writeFile(path.join(workDir, 'mirrors', mirror as string, 'refs', 'fluksio', 'slot-0.lock'), '');
    await repo.write('a.txt', 'b\n');
    const second = await repo.commitAll('second');
    await workspace.checkout(request(repo, second));
    expect(gitIn(dir, 'rev-parse', 'HEAD')).toBe(second);
  });

  test('what a stage wrote into the checkout’s .git/config is gone before git runs there again', async () => {
    const repo = await repoWith({ 'a.txt': 'a\n' });
    const commit = await head(repo);
    const workspace = new GitWorkspace({ workDir, environment: process.env });
    const dir = await workspace.checkout(request(repo, commit));
    const marker = path.join(workDir, 'fsmonitor-ran');
    await writeFile(
      path.join(dir, '.git', 'config'),
      `[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch ${marker}; false"\n[alias]\n\tcheckout = "!touch ${marker}"\n`,
    );
    await workspace.checkout(request(repo, commit));
    expect(existsSync(marker)).toBe(false);
    expect(await readFile(path.join(dir, '.git', 'config'), 'utf8')).not.toContain('fsmonitor');
  });
  test('a resumed run reopens its checkout as it was left (a Slurm job still writes there): nothing fetched or cleaned, HEAD verified', async () => {
    const repo = await repoWith({ 'train.py': 'print(1)\n', '.gitignore': 'model.bin\n' });
    const first = await head(repo);
    const workspace = new GitWorkspace({ workDir, environment: process.env });
    const dir = await workspace.checkout(request(repo, first));
    await writeFile(path.join(dir, 'model.bin'), 'half-written weights');
    await writeFile(path.join(dir, 'checkpoint.txt'), 'step 40');

    expect(await workspace.reopen(request(repo, first))).toBe(dir);
    expect(await readFile(path.join(dir, 'model.bin'), 'utf8')).toBe('half-written weights');
    expect(await readFile(path.join(dir, 'checkpoint.txt'), 'utf8')).toBe('step 40');
    await repo.write('train.py', 'print(2)\n');
    const second = await repo.commitAll('second');
    await expect(workspace.reopen(request(repo, second))).rejects.toThrow(
      `The checkout of the resumed run is at ${first}, not the run's commit ${second}`,
    );
    await rm(dir, { recursive: true, force: true });
    await expect(workspace.reopen(request(repo, first))).rejects.toThrow(
      /is gone or not a plain git checkout; expected the one its runner left/,
    );
  });

  test('past the size cap the least recently used mirrors go, with their checkouts; a mirror in use stays', async () => {
    const repos = await Promise.all(
      ['a', 'b', 'c'].map((name) => repoWith({ 'train.py': `print("${name}")\n` })),
    );
    const requests = await Promise.all(
      repos.map(async (repo, index) =>
        request(repo, await head(repo), { repository: `local/project-${index}` }),
      ),
    );
    const mirrorBytes = async () => {
      const sizes = execFileSync(
        'du',
        ['-s', '--block-size=1', ...(await readdir(path.join(workDir, 'mirrors')))],
        {
          cwd: path.join(workDir, 'mirrors'),
        },
      ).toString();
      return Math.max(
        ...sizes
          .trim()
          .split('\n')
          .map((line) => Number(line.split('\t')[0])),
      );
    };
    const pruned: string[][] = [];
    const probe = new GitWorkspace({ workDir, environment: process.env });
    await probe.checkout(requests[0] as CheckoutRequest);
    // Room for two mirrors of this size, not three.
    const workspace = new GitWorkspace({
      workDir,
      environment: process.env,
      maxMirrorBytes: Math.floor((await mirrorBytes()) * 2.5),
      onPruned: (mirrors) => pruned.push(mirrors.map((mirror) => path.basename(mirror))),
    });
    const [a, b, c] = requests as [CheckoutRequest, CheckoutRequest, CheckoutRequest];
    const mirrorOf = (req: CheckoutRequest) => path.basename(workspace.pathsOf(req).mirror);
    await workspace.checkout(b);
    expect(pruned).toEqual([]);
    await workspace.checkout(c);
    expect(pruned).toEqual([[mirrorOf(a)]]);
    expect(existsSync(workspace.pathsOf(a).checkout)).toBe(false);
    // a is used again: now b is the least recently used.
    const again = await workspace.checkout(a);
    expect(gitIn(again, 'rev-parse', 'HEAD')).toBe(a.commit);
    expect(pruned).toEqual([[mirrorOf(a)], [mirrorOf(b)]]);
    expect((await readdir(path.join(workDir, 'mirrors'))).sort()).toEqual([mirrorOf(a), mirrorOf(c)].sort());

    // With no room at all, the mirrors slots use stay: slot 0 is on a, slot 1 on c.
    const tight = new GitWorkspace({ workDir, environment: process.env, maxMirrorBytes: 1 });
    await tight.checkout(a);
    await tight.checkout({ ...c, slot: 1 });
    expect((await readdir(path.join(workDir, 'mirrors'))).sort()).toEqual([mirrorOf(a), mirrorOf(c)].sort());
    await tight.checkout(b);
    expect(await readdir(path.join(workDir, 'mirrors'))).toEqual(
      expect.arrayContaining([mirrorOf(b), mirrorOf(c)]),
    );
    expect(await readdir(path.join(workDir, 'mirrors'))).not.toContain(mirrorOf(a));
  });
});

describe('hardening', () => {
  test('an ext:: URL or a URL starting with - never executes anything', async () => {
    const marker = path.join(workDir, 'pwned');
    const workspace = new GitWorkspace({ workDir, environment: process.env });
    const commit = 'c'.repeat(40);
    for (const cloneUrl of [
      `ext::sh -c touch% ${marker}`,
      `--upload-pack=touch ${marker}`,
      `-u touch ${marker}`,
    ]) {
      await expect(
        workspace.checkout({
          slot: 0,
          repository: 'evil/repo',
          cloneUrl,
          fetchRef: null,
          commit,
          extraHeader: null,
        }),
      ).rejects.toThrow(/is refused: expected https:\/\//);
    }
    // git itself refuses them too, should a URL ever get past the check.
    const bare = path.join(workDir, 'bare.git');
    await runGit(['init', '--quiet', '--bare', bare], {
      cwd: workDir,
      environment: process.env,
      allowFile: false,
    });
    for (const url of [`ext::sh -c touch% ${marker}`, `--upload-pack=touch ${marker}`]) {
      await expect(
        runGit(['fetch', '--quiet', '--', url, 'HEAD'], {
          cwd: bare,
          environment: process.env,
          allowFile: true,
        }),
      ).rejects.toThrow(
        /transport 'ext' not allowed|strange pathname|does not appear to be a git repository/,
      );
    }
    expect(existsSync(marker)).toBe(false);
  });

  test('a submodule with an ext:: URL fails the checkout without executing anything', async () => {
    const marker = path.join(workDir, 'pwned-by-submodule');
    const project = await repoWith({
      'main.py': 'print(1)\n',
      '.gitmodules': `[submodule "evil"]\n\tpath = evil\n\turl = ext::sh -c touch% ${marker}\n`,
    });
    // A gitlink with no directory behind it (`git add --all` would drop it again).
    await project.git('update-index', '--add', '--cacheinfo', `160000,${'d'.repeat(40)},evil`);
    await project.git('commit', '--quiet', '--message', 'an evil submodule');
    const commit = await head(project);
    const workspace = new GitWorkspace({ workDir, environment: process.env });
    await expect(workspace.checkout(request(project, commit))).rejects.toThrow(
      /Could not check out the submodules/,
    );
    expect(existsSync(marker)).toBe(false);
  });

  test('the extra header reaches the fetch through its environment only: never an argument, never a config file', async () => {
    const repo = await repoWith({ 'a.txt': 'a\n' });
    const commit = await head(repo);
    const secret = `Authorization: Basic ${randomSecret()}`;
    // A `git` first on PATH that records what `ps` would show (its argv) and its GIT_CONFIG_* variables.
    const wrapperDir = await mkdtemp(path.join(tmpdir(), 'fluksio-git-wrapper-'));
    const log = path.join(wrapperDir, 'calls.log');
    const realGit = execFileSync('sh', ['-c', 'command -v git']).toString().trim();
    await writeFile(
      path.join(wrapperDir, 'git'),
      `#!/bin/sh\n{ printf 'ARGV'; for a in "$@"; do printf ' %s' "$a"; done; printf '\\n'; env | grep '^GIT_CONFIG' | sed 's/^/ENV /'; } >> '${log}'\nexec '${realGit}' "$@"\n`,
    );
    await chmod(path.join(wrapperDir, 'git'), 0o755);
    try {
      const environment = { ...process.env, PATH: `${wrapperDir}:${process.env.PATH}` };
      await new GitWorkspace({ workDir, environment }).checkout(
        request(repo, commit, { extraHeader: secret }),
      );
      const calls = (await readFile(log, 'utf8')).split(/^(?=ARGV)/m).map((call) => call.trim().split('\n'));
      expect(calls.length).toBeGreaterThan(2);
      expect(calls.filter(([argv]) => argv?.includes(secret))).toEqual([]);
      const withHeader = calls.filter((call) => call.some((line) => line.includes(secret)));
      // The fetch, and the ls-remote that checks the commit is on a branch.
      expect(withHeader.map((call) => / (fetch|ls-remote) /.exec(call[0] ?? '')?.[1]).sort()).toEqual([
        'fetch',
        'ls-remote',
      ]);
      for (const call of withHeader) {
        expect(call[0]).toMatch(/ -- file:\/\//);
        expect(call).toContain(`ENV GIT_CONFIG_VALUE_0=${secret}`);
        expect(call).toContain(`ENV GIT_CONFIG_KEY_0=http.file://${repo.dir}.extraHeader`);
      }
      expect(await filesContaining(workDir, secret)).toEqual([]);
    } finally {
      await rm(wrapperDir, { recursive: true, force: true });
    }
  });
});

/** Every file under `dir` whose bytes contain `text`. */
async function filesContaining(dir: string, text: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    if ((await readFile(file)).includes(text)) found.push(file);
  }
  return found;
}

function randomSecret(): string {
  return `c2VjcmV0LXRva2Vu${Math.random().toString(36).slice(2)}`;
}
