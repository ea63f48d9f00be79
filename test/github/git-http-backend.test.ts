import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Octokit } from '@octokit/rest';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { InstallationGitCredentials } from '../../app/github/installation-git-credentials.js';
import { GitWorkspace } from '../../runner/daemon/git-workspace.js';
import type { Run } from '../../schemas/tables/runs.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { parseCgiHead } from './git-http-backend.js';
import {
  startGitHubDouble,
  testAppCredentials,
  type DoubleRepository,
  type GitHubDouble,
  type InstallationPermissions,
} from './github-double.js';
import { probotForDouble } from './probot-for-double.js';
import { pushPayload } from './webhook-fixtures.js';

// Plain Octokit clients log every 4xx; the refusals here are the point of the tests.
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const credentials = testAppCredentials();

/** `http.extraHeader` as the app hands it to the runner. */
const basicHeader = (token: string) =>
  `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;

interface GitResult {
  ok: boolean;
  stderr: string;
}

/**
 * Runs git as the runner does: no system or global config, no prompt, and the credential only in
 * the environment (`GIT_CONFIG_COUNT`/`_KEY_0`/`_VALUE_0`, `http.<url>.extraHeader`).
 */
function git(
  cwd: string,
  args: string[],
  auth?: { url: string; header: string },
  extraEnv: Record<string, string> = {},
): Promise<GitResult> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? tmpdir(),
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    ...extraEnv,
    ...(auth && {
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: `http.${auth.url}.extraHeader`,
      GIT_CONFIG_VALUE_0: auth.header,
    }),
  };
  const config = ['protocol.allow=never', 'protocol.http.allow=always', 'core.hooksPath=/dev/null'];
  return new Promise((resolve) => {
    execFile(
      'git',
      [...config.flatMap((entry) => ['-c', entry]), ...args],
      { cwd, env, timeout: 30_000 },
      (error, _stdout, stderr) => resolve({ ok: !error, stderr }),
    );
  });
}

/** Fetches exactly `commit` from `url` into `target`'s `refs/fetched`. */
function fetchCommit(
  target: TestRepo,
  url: string,
  commit: string,
  header?: string,
  protocolVersion = 2,
): Promise<GitResult> {
  return git(
    target.dir,
    [
      '-c',
      `protocol.version=${protocolVersion}`,
      'fetch',
      '--quiet',
      '--no-tags',
      '--no-write-fetch-head',
      '--',
      url,
      `+${commit}:refs/fetched`,
    ],
    header === undefined ? undefined : { url, header },
  );
}

async function hasCommit(target: TestRepo, commit: string): Promise<boolean> {
  return target.git('cat-file', '-e', `${commit}^{commit}`).then(
    () => true,
    () => false,
  );
}

let double: GitHubDouble;
let repo: DoubleRepository;
let source: TestRepo;
let target: TestRepo;
let first: string;
let second: string;
let appApi: Octokit;

beforeEach(async () => {
  double = await startGitHubDouble({ credentials });
  repo = double.addRepository({ owner: 'acme', name: 'ml', private: true });
  source = await makeRepo({ files: { 'fluksio.yml': 'version: 1\n' } });
  first = (await source.git('rev-parse', 'HEAD')).trim();
  await source.write('train.py', 'print("hi")\n');
  second = await source.commitAll('train');
  target = await makeRepo({ files: {}, commit: false });
  appApi = (await probotForDouble(double).auth()) as unknown as Octokit;
});

afterEach(async () => {
  await double.close();
  await source.cleanup();
  await target.cleanup();
});

/** A token minted as the app mints the runner's: one repository, `contents: read`. */
async function mint(
  repository: DoubleRepository = repo,
  permissions: InstallationPermissions = { contents: 'read' },
): Promise<string> {
  const { data } = await appApi.rest.apps.createInstallationAccessToken({
    installation_id: repository.installationId,
    repositories: [repository.name],
    permissions,
  });
  return data.token;
}

describe('git over smart HTTP from the GitHub double', () => {
  test('the clone URL is the double’s, and API answers and payloads carry it as clone_url', async () => {
    const url = double.serveRepository('acme/ml', source.dir);

    expect(url).toBe(`${double.url}/git/acme/ml.git`);
    expect(double.cloneUrl('ACME/ML')).toBe(url);
    const installationApi = new Octokit({ auth: await mint(), baseUrl: double.url, log: quiet });
    const { data } = await installationApi.rest.repos.get({ owner: 'acme', repo: 'ml' });
    expect(data.clone_url).toBe(url);
    expect(pushPayload({ repo, after: second }).payload.repository.clone_url).toBe(url);
    expect(double.violations).toEqual([]);
  });

  test.each([2, 0])(
    'protocol v%i: a fetch of an exact commit with the token in git’s environment brings it, and is recorded without the token',
    async (version) => {
      const url = double.serveRepository('acme/ml', source.dir);
      const token = await mint();

      const fetched = await fetchCommit(target, url, first, basicHeader(token), version);

      expect(fetched).toEqual({ ok: true, stderr: '' });
      expect(await hasCommit(target, first)).toBe(true);
      expect(await hasCommit(target, second)).toBe(false);
      const tokenId = double.issuedTokens().find((issued) => issued.token === token)?.id;
      const fetches = double.gitFetches('acme/ml');
      expect(fetches.map((request) => `${request.method} ${request.path} ${request.status}`)).toEqual([
        'GET /git/acme/ml.git/info/refs 200',
        ...fetches.slice(1).map(() => 'POST /git/acme/ml.git/git-upload-pack 200'),
      ]);
      expect(fetches.length).toBeGreaterThan(1);
      for (const request of fetches) {
        expect(request).toMatchObject({
          route: 'git',
          operationId: 'git-upload-pack',
          repository: 'acme/ml',
          tokenId,
          installationId: repo.installationId,
        });
      }
      expect(fetches[0]?.query).toEqual({ service: 'git-upload-pack' });
      expect(JSON.stringify(double.requests)).not.toContain(token);
      expect(JSON.stringify(double.requests)).not.toContain(
        Buffer.from(`x-access-token:${token}`).toString('base64'),
      );
      expect(double.violations).toEqual([]);
    },
  );

  test('commits made in the work tree later are served; a commit the repository lacks is not', async () => {
    const url = double.serveRepository('acme/ml', source.dir);
    const header = basicHeader(await mint());
    await source.write('eval.py', 'print("eval")\n');
    const third = await source.commitAll('eval');
    const elsewhere = await makeRepo({ files: { 'other.txt': 'other\n' } });
    const missing = (await elsewhere.git('rev-parse', 'HEAD')).trim();
    await elsewhere.cleanup();

    expect((await fetchCommit(target, url, third, header)).ok).toBe(true);
    for (const version of [2, 0]) {
      const refused = await fetchCommit(target, url, missing, header, version);
      expect(refused.ok).toBe(false);
      expect(refused.stderr).toContain('not our ref');
    }
  });

  test('without a token, with one never issued, or with the token once revoked: 401, git does not prompt, nothing is fetched', async () => {
    const url = double.serveRepository('acme/ml', source.dir);
    const token = await mint();
    await new Octokit({
      auth: token,
      baseUrl: double.url,
      log: quiet,
    }).rest.apps.revokeInstallationAccessToken();

    const results = [
      await fetchCommit(target, url, first),
      await fetchCommit(target, url, first, basicHeader('ghs_neverissued')),
      await fetchCommit(target, url, first, basicHeader(token)),
      await fetchCommit(target, url, first, `AUTHORIZATION: bearer ${await mint()}`),
    ];

    for (const result of results) {
      expect(result.ok).toBe(false);
      expect(result.stderr).toMatch(/terminal prompts disabled|Authentication failed/);
    }
    expect(await hasCommit(target, first)).toBe(false);
    expect(double.gitFetches('acme/ml').map((request) => request.status)).toEqual([401, 401, 401, 401]);
    expect(double.gitFetches('acme/ml')[2]?.tokenId).toBeUndefined();
    expect(JSON.stringify(double.requests)).not.toContain(token);
    const answer = await fetch(`${url}/info/refs?service=git-upload-pack`);
    expect(answer.status).toBe(401);
    expect(answer.headers.get('www-authenticate')).toBe('Basic realm="GitHub"');
    expect(double.violations).toEqual([]);
  });

  test('a token for another repository is answered 404 as GitHub hides it, one without contents 403', async () => {
    const url = double.serveRepository('acme/ml', source.dir);
    const other = double.addRepository({ owner: 'acme', name: 'other', private: true });
    const elsewhere = double.addRepository({ owner: 'globex', name: 'ml', private: true });

    const results = [
      await fetchCommit(target, url, first, basicHeader(await mint(other))),
      await fetchCommit(target, url, first, basicHeader(await mint(elsewhere))),
      await fetchCommit(target, url, first, basicHeader(await mint(repo, { checks: 'write' }))),
    ];

    expect(results.map((result) => result.ok)).toEqual([false, false, false]);
    expect(results[0]?.stderr).toContain('not found');
    expect(await hasCommit(target, first)).toBe(false);
    expect(double.gitFetches('acme/ml').map((request) => request.status)).toEqual([404, 404, 403]);
    expect(double.violations).toEqual([]);
  });

  test('a push is refused, with a token that may write contents too, and the served repository is unchanged', async () => {
    double.addInstallation({
      account: { login: 'writers' },
      permissions: { contents: 'write', metadata: 'read' },
    });
    const writable = double.addRepository({ owner: 'writers', name: 'ml', private: true });
    const url = double.serveRepository('writers/ml', source.dir);
    await target.write('evil.txt', 'x\n');
    const pushed = await target.commitAll('evil');

    for (const header of [undefined, basicHeader(await mint(writable, { contents: 'write' }))]) {
      const result = await git(
        target.dir,
        ['push', '--quiet', '--', url, `${pushed}:refs/heads/evil`],
        header === undefined ? undefined : { url, header },
      );
      expect(result.ok).toBe(false);
    }

    expect(double.gitFetches('writers/ml').map((request) => [request.operationId, request.status])).toEqual([
      ['git-receive-pack', 401],
      ['git-receive-pack', 403],
    ]);
    expect(await source.git('for-each-ref', '--format=%(refname)')).toBe('refs/heads/main\n');
    expect(await hasCommit(source, pushed)).toBe(false);
  });

  test.each([2, 0])(
    'protocol v%i: a fetch into a repository with a long history of its own (large, gzipped request bodies) works',
    async (version) => {
      const url = double.serveRepository('acme/ml', source.dir);
      // 600 unrelated commits in one fast-import: the fetch sends a "have" line for each.
      const stream = Array.from({ length: 600 }, (_, index) =>
        [
          `commit refs/heads/local-${index}`,
          `committer t <t@fluksio.invalid> ${1_700_000_000 + index} +0000`,
          'data 1',
          `${index % 10}`,
          '',
        ].join('\n'),
      ).join('\n');
      await new Promise<void>((resolve, reject) => {
        const child = execFile('git', ['fast-import', '--quiet'], { cwd: target.dir }, (error) =>
          error ? reject(error) : resolve(),
        );
        child.stdin?.end(`${stream}\n`);
      });

      const fetched = await fetchCommit(target, url, second, basicHeader(await mint()), version);

      expect(fetched.ok, fetched.stderr).toBe(true);
      expect(await hasCommit(target, second)).toBe(true);
      const posts = double.gitFetches('acme/ml').filter((request) => request.method === 'POST');
      expect(posts.some((request) => request.headers['content-encoding'] === 'gzip')).toBe(true);
      expect(posts.every((request) => request.status === 200)).toBe(true);
      expect(double.violations).toEqual([]);
    },
  );

  test('a repository not served, and dumb-HTTP paths, are 404 and recorded as violations', async () => {
    const url = double.cloneUrl('acme/ml');
    const header = basicHeader(await mint());

    expect((await fetchCommit(target, url, first, header)).ok).toBe(false);
    const dumb = await fetch(`${url}/HEAD`, { headers: { authorization: 'basic eDp5' } });

    expect(dumb.status).toBe(404);
    expect(double.violations.map((violation) => violation.kind)).toEqual([
      'unknown-repository',
      'unknown-route',
    ]);
  });

  test('failNext("git") fails the next git request as a broken GitHub would', async () => {
    const url = double.serveRepository('acme/ml', source.dir);
    double.failNext('git', { status: 502 });
    const header = basicHeader(await mint());

    expect((await fetchCommit(target, url, first, header)).ok).toBe(false);
    expect((await fetchCommit(target, url, first, header)).ok).toBe(true);
    expect(double.gitFetches('acme/ml')[0]).toMatchObject({ status: 502, fault: 'injected' });
  });
});

describe('over HTTPS, with the app’s credential and the runner’s workspace', () => {
  test('the runner’s GitWorkspace checks out the commit with the minted header; once revoked, the header fetches nothing', async () => {
    await double.close();
    double = await startGitHubDouble({ credentials, https: true });
    repo = double.addRepository({ owner: 'acme', name: 'ml', private: true });
    const cloneUrl = double.serveRepository('acme/ml', source.dir);
    expect(cloneUrl).toBe(`${double.httpsUrl}/git/acme/ml.git`);
    const gitCredentials = new InstallationGitCredentials(
      () => probotForDouble(double).auth(),
      double.url,
      pino({ level: 'silent' }),
    );
    const run = { id: 'run-1', repository: 'acme/ml', installationId: repo.installationId } as Run;
    const workDirs = [
      await mkdtemp(path.join(tmpdir(), 'fluksio-double-git-')),
      await mkdtemp(path.join(tmpdir(), 'fluksio-double-git-')),
    ];
    const workspace = (workDir: string) =>
      new GitWorkspace({
        workDir,
        environment: { PATH: process.env.PATH, HOME: process.env.HOME, GIT_SSL_CAINFO: double.caFile ?? '' },
      });
    const checkout = { slot: 0, repository: 'acme/ml', cloneUrl, fetchRef: null, commit: first };
    try {
      const extraHeader = await gitCredentials.forRun(run);
      expect(extraHeader).not.toBeNull();

      const dir = await workspace(workDirs[0] ?? '').checkout({ ...checkout, extraHeader });
      expect(await gitCredentials.revoke(extraHeader ?? '')).toBe(true);
      await expect(workspace(workDirs[1] ?? '').checkout({ ...checkout, extraHeader })).rejects.toThrow(
        /Could not fetch commit/,
      );

      expect(path.basename(dir)).toMatch(/^acme_ml-/);
      const [token, ...others] = double.issuedTokens().filter((issued) => issued.repositoryIds !== null);
      expect(others).toEqual([]);
      expect(token).toMatchObject({ repositoryIds: [repo.id], permissions: { contents: 'read' } });
      expect(token?.revokedAt).toBeInstanceOf(Date);
      const statuses = double.gitFetches('acme/ml').map((request) => [request.tokenId, request.status]);
      expect(statuses[0]).toEqual([token?.id, 200]);
      expect(statuses.at(-1)).toEqual([undefined, 401]);
      expect(JSON.stringify(double.requests)).not.toContain(token?.token);
      expect(double.violations).toEqual([]);
    } finally {
      await Promise.all(workDirs.map((dir) => rm(dir, { recursive: true, force: true })));
    }
  });
});

describe('parseCgiHead', () => {
  test('reads the status and headers, and keeps the body that followed them', () => {
    const parsed = parseCgiHead(
      Buffer.from('Status: 404 Not Found\r\nContent-Type: text/plain\r\n\r\nmissing'),
    );
    expect(parsed).toEqual({
      status: 404,
      headers: { 'content-type': 'text/plain' },
      body: Buffer.from('missing'),
    });
    expect(parseCgiHead(Buffer.from('Content-Type: x\n\n'))?.status).toBe(200);
    expect(parseCgiHead(Buffer.from('Content-Type: x\r\n'))).toBeUndefined();
  });
});
