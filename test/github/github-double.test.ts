import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Octokit } from '@octokit/rest';
import { createNodeMiddleware, type Probot } from 'probot';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  primaryRateLimit,
  secondaryRateLimit,
  startGitHubDouble,
  testAppCredentials,
  type DoubleRepository,
  type GitHubDouble,
} from './github-double.js';
import { loadGitHubRoutes } from './github-routes.js';
import { probotForDouble } from './probot-for-double.js';
import { sendWebhook } from './send-webhook.js';
import {
  checkRunPayload,
  checkSuitePayload,
  installationPayload,
  issueCommentPayload,
  pullRequestPayload,
  pushPayload,
  type WebhookDelivery,
} from './webhook-fixtures.js';

const HEAD = 'a'.repeat(40);
const BASE = 'b'.repeat(40);
const sha = (digit: string): string => digit.repeat(40);
// Plain Octokit clients log every 4xx; the refusals here are the point of the tests.
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

const annotation = (line: number) => ({
  path: 'train.py',
  start_line: line,
  end_line: line,
  annotation_level: 'failure' as const,
  message: `line ${line} failed`,
});

// One key for the file: generating it takes about half a second here.
const credentials = testAppCredentials();
let double: GitHubDouble;
let repo: DoubleRepository;
let probot: Probot;

beforeEach(async () => {
  double = await startGitHubDouble({ credentials });
  repo = double.addRepository({ owner: 'acme', name: 'ml' });
  probot = probotForDouble(double);
});

afterEach(async () => {
  await double.close();
});

describe('the GitHub double behind Probot', () => {
  test('Probot exchanges its JWT for an installation token and reads a file at a commit', async () => {
    double.setFile('acme/ml', HEAD, 'fluksio.yml', 'stages:\n  train: {}\n');
    const octokit = await probot.auth(repo.installationId);

    const { data } = await octokit.rest.repos.getContent({
      owner: 'acme',
      repo: 'ml',
      path: 'fluksio.yml',
      ref: HEAD,
    });

    expect(
      Array.isArray(data) || data.type !== 'file'
        ? undefined
        : Buffer.from(data.content, 'base64').toString(),
    ).toBe('stages:\n  train: {}\n');
    await expect(
      octokit.rest.repos.getContent({ owner: 'acme', repo: 'ml', path: 'fluksio.yml', ref: BASE }),
    ).rejects.toMatchObject({ status: 404 });
    expect(double.issuedTokens()).toMatchObject([{ installationId: repo.installationId, revokedAt: null }]);
    expect(double.requests.map((request) => `${request.method} ${request.route} ${request.status}`)).toEqual([
      'POST /app/installations/{installation_id}/access_tokens 201',
      'GET /repos/{owner}/{repo}/contents/{path} 200',
      'GET /repos/{owner}/{repo}/contents/{path} 404',
    ]);
    expect(double.requests[1]?.headers.authorization).toBeUndefined();
    expect(double.violations).toEqual([]);
  });

  test('a check run is created, updated with more annotations, and found again by ref and name', async () => {
    const octokit = await probot.auth(repo.installationId);
    const owner = { owner: 'acme', repo: 'ml' };

    const { data: created } = await octokit.rest.checks.create({
      ...owner,
      name: 'fluksio',
      head_sha: HEAD,
      external_id: 'run-42',
      status: 'queued',
      output: { title: 'Queued', summary: 'Waiting for a runner with label `gpu`' },
    });
    await octokit.rest.checks.update({ ...owner, check_run_id: created.id, status: 'in_progress' });
    await octokit.rest.checks.update({
      ...owner,
      check_run_id: created.id,
      conclusion: 'failure',
      output: {
        title: 'Failed',
        summary: 'train failed',
        annotations: Array.from({ length: 50 }, (_, i) => annotation(i + 1)),
      },
      actions: [{ label: 'Re-run', description: 'Run again', identifier: 'rerun' }],
    });
    await octokit.rest.checks.update({
      ...owner,
      check_run_id: created.id,
      output: {
        summary: 'train failed',
        annotations: Array.from({ length: 20 }, (_, i) => annotation(i + 51)),
      },
    });

    const { data: found } = await octokit.rest.checks.listForRef({
      ...owner,
      ref: HEAD,
      check_name: 'fluksio',
    });
    const annotations = await octokit.paginate(octokit.rest.checks.listAnnotations, {
      ...owner,
      check_run_id: created.id,
    });

    expect(created.id).toBeGreaterThan(2 ** 32);
    expect(found.total_count).toBe(1);
    expect(found.check_runs[0]).toMatchObject({
      id: created.id,
      external_id: 'run-42',
      status: 'completed',
      conclusion: 'failure',
      output: { title: 'Failed', annotations_count: 70 },
    });
    expect(annotations.map((item) => item.start_line)).toEqual(Array.from({ length: 70 }, (_, i) => i + 1));
    const [kept] = double.checkRuns('acme/ml');
    expect(kept?.history.map((entry) => entry.method)).toEqual(['POST', 'PATCH', 'PATCH', 'PATCH']);
    expect(kept?.actions).toEqual([{ label: 'Re-run', description: 'Run again', identifier: 'rerun' }]);
    expect(double.violations).toEqual([]);
  });

  test('a request GitHub would refuse is answered 422 and recorded: 51 annotations, a 70,000-character summary', async () => {
    const octokit = await probot.auth(repo.installationId);
    const base = { owner: 'acme', repo: 'ml', name: 'fluksio', head_sha: HEAD };

    await expect(
      octokit.rest.checks.create({
        ...base,
        output: {
          title: 'Failed',
          summary: 'x',
          annotations: Array.from({ length: 51 }, (_, i) => annotation(i + 1)),
        },
      }),
    ).rejects.toMatchObject({ status: 422 });
    await expect(
      octokit.rest.checks.create({ ...base, output: { title: 'Failed', summary: 'x'.repeat(70_000) } }),
    ).rejects.toMatchObject({
      status: 422,
      response: { data: { errors: [{ instancePath: '/output/summary' }] } },
    });
    await expect(octokit.rest.checks.create({ ...base, head_sha: 'abc1234' })).rejects.toMatchObject({
      status: 422,
    });
    const button = { label: 'Re-run', description: 'Run again', identifier: 'rerun' };
    await expect(
      octokit.rest.checks.create({ ...base, actions: [button, button, button, button] }),
    ).rejects.toMatchObject({
      status: 422,
    });
    // A misspelt field GitHub would silently drop: Octokit's types catch it, so cast past them.
    const misspelt = { title: 'x', summery: 'typo' } as unknown as { title: string; summary: string };
    await expect(octokit.rest.checks.create({ ...base, output: misspelt })).rejects.toMatchObject({
      status: 422,
    });
    await expect(
      octokit.rest.issues.createComment({
        owner: 'acme',
        repo: 'ml',
        issue_number: 1,
        body: 'x'.repeat(65_537),
      }),
    ).rejects.toMatchObject({ status: 422 });

    expect(double.checkRuns('acme/ml')).toEqual([]);
    expect(double.comments('acme/ml', 1)).toEqual([]);
    expect(
      double.violations.map((violation) => [violation.kind, violation.errors?.[0]?.instancePath]),
    ).toEqual([
      ['invalid-request', '/output/annotations'],
      ['invalid-request', '/output/summary'],
      ['invalid-request', undefined],
      ['invalid-request', '/actions'],
      ['invalid-request', '/output'],
      ['invalid-request', '/body'],
    ]);
  });

  test("every operation of the subset answers as GitHub's schema describes", async () => {
    const owner = { owner: 'acme', repo: 'ml' };
    double.setFile('acme/ml', 'main', 'configs/fluksio.yml', 'stages: {}\n');
    double.setPullRequest('acme/ml', {
      number: 2,
      head: { sha: HEAD, ref: 'topic' },
      base: { sha: BASE, ref: 'main' },
    });
    double.setCommits('acme/ml', [HEAD, BASE], { branch: 'topic' });
    double.setMergeBase('acme/ml', 'main', 'topic', BASE);
    const app = await probot.auth();
    const octokit = await probot.auth(repo.installationId);

    await app.rest.apps.getAuthenticated();
    await app.rest.apps.getInstallation({ installation_id: repo.installationId });
    await app.rest.apps.getRepoInstallation(owner);
    await octokit.rest.repos.get(owner);
    const { data: raw } = await octokit.rest.repos.getContent({
      ...owner,
      path: 'configs/fluksio.yml',
      mediaType: { format: 'raw' },
    });
    await octokit.rest.pulls.get({ ...owner, pull_number: 2 });
    await octokit.rest.repos.getCollaboratorPermissionLevel({ ...owner, username: 'alice' });
    const { data: comment } = await octokit.rest.issues.createComment({
      ...owner,
      issue_number: 2,
      body: 'hello',
    });
    await octokit.rest.issues.getComment({ ...owner, comment_id: comment.id });
    await octokit.rest.issues.updateComment({ ...owner, comment_id: comment.id, body: 'hello again' });
    await octokit.rest.issues.listComments({ ...owner, issue_number: 2 });
    await octokit.rest.reactions.createForIssueComment({
      ...owner,
      comment_id: comment.id,
      content: 'rocket',
    });
    const { data: checkRun } = await octokit.rest.checks.create({
      ...owner,
      name: 'fluksio',
      head_sha: HEAD,
    });
    await octokit.rest.checks.update({ ...owner, check_run_id: checkRun.id, conclusion: 'success' });
    await octokit.rest.checks.get({ ...owner, check_run_id: checkRun.id });
    await octokit.rest.checks.listAnnotations({ ...owner, check_run_id: checkRun.id });
    await octokit.rest.checks.listForRef({ ...owner, ref: 'topic', filter: 'all' });
    await octokit.rest.repos.compareCommitsWithBasehead({ ...owner, basehead: 'main...topic' });
    await octokit.rest.repos.listCommits({ ...owner, sha: 'topic' });
    await octokit.rest.apps.revokeInstallationAccessToken();
    // A user's token, from the App's OAuth web flow (the run pages' sign-in).
    double.signInAs('alice');
    const authorized = await fetch(
      `${double.url}/login/oauth/authorize?client_id=${double.oauth.clientId}&redirect_uri=${encodeURIComponent('http://127.0.0.1:9/callback')}&state=s1`,
      { redirect: 'manual' },
    );
    const back = new URL(authorized.headers.get('location') ?? '');
    expect(back.searchParams.get('state')).toBe('s1');
    const exchanged = await fetch(`${double.url}/login/oauth/access_token`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({
        client_id: double.oauth.clientId,
        client_secret: double.oauth.clientSecret,
        code: back.searchParams.get('code'),
      }),
    });
    const { access_token: userToken } = (await exchanged.json()) as { access_token: string };
    const asUser = new Octokit({ baseUrl: double.url, auth: userToken, log: quiet });
    expect((await asUser.rest.users.getAuthenticated()).data.login).toBe('alice');
    await asUser.rest.repos.get(owner);

    expect(raw).toBe('stages: {}\n');
    expect(checkRun.pull_requests.map((pullRequest) => pullRequest.number)).toEqual([2]);
    // The web flow's two requests are no REST operations (operationId null).
    expect(new Set(double.requests.map((request) => request.operationId).filter(Boolean))).toEqual(
      new Set(loadGitHubRoutes().routes.map((route) => route.operationId)),
    );
    expect(double.source).toEqual({ package: '@octokit/openapi', version: '23.0.1' });
    expect(double.violations).toEqual([]);
  });

  test('comments, edits, reactions and permissions keep their state', async () => {
    const octokit = await probot.auth(repo.installationId);
    const owner = { owner: 'acme', repo: 'ml' };
    double.setPermission('acme/ml', 'alice', 'write');

    const { data: comment } = await octokit.rest.issues.createComment({
      ...owner,
      issue_number: 7,
      body: 'queued',
    });
    await octokit.rest.issues.updateComment({ ...owner, comment_id: comment.id, body: 'finished' });
    const { status: first } = await octokit.rest.reactions.createForIssueComment({
      ...owner,
      comment_id: 99,
      content: 'eyes',
    });
    const { status: again } = await octokit.rest.reactions.createForIssueComment({
      ...owner,
      comment_id: 99,
      content: 'eyes',
    });
    const { data: listed } = await octokit.rest.issues.listComments({ ...owner, issue_number: 7 });
    const { data: alice } = await octokit.rest.repos.getCollaboratorPermissionLevel({
      ...owner,
      username: 'alice',
    });
    const { data: bob } = await octokit.rest.repos.getCollaboratorPermissionLevel({
      ...owner,
      username: 'bob',
    });

    expect(comment.user?.login).toBe('fluksio[bot]');
    expect(listed.map((item) => item.body)).toEqual(['finished']);
    expect(double.comments('acme/ml', 7)).toMatchObject([{ body: 'finished', previousBodies: ['queued'] }]);
    expect([first, again]).toEqual([201, 200]);
    expect(double.reactions('acme/ml', 99)).toMatchObject([
      { content: 'eyes', user: { login: 'fluksio[bot]' } },
    ]);
    expect([alice.permission, bob.permission]).toEqual(['write', 'read']);
    expect(double.violations).toEqual([]);
  });

  test("a fork's pull request names its own head repository; a deleted fork's is null", async () => {
    const octokit = await probot.auth(repo.installationId);
    double.setPullRequest('acme/ml', {
      number: 3,
      head: { sha: HEAD, ref: 'patch-1', repoId: 77, repoFullName: 'mallory/ml' },
      base: { sha: BASE, ref: 'main' },
    });
    double.setPullRequest('acme/ml', {
      number: 4,
      head: { sha: HEAD, ref: 'gone', repoId: null },
      base: { sha: BASE, ref: 'main' },
    });

    const { data: fork } = await octokit.rest.pulls.get({ owner: 'acme', repo: 'ml', pull_number: 3 });
    const { data: deleted } = await octokit.rest.pulls.get({ owner: 'acme', repo: 'ml', pull_number: 4 });

    expect(fork.head).toMatchObject({
      sha: HEAD,
      ref: 'patch-1',
      repo: { id: 77, full_name: 'mallory/ml', fork: true },
    });
    expect(fork.base).toMatchObject({ sha: BASE, repo: { id: repo.id, full_name: 'acme/ml' } });
    expect(deleted.head.repo).toBeNull();
    expect(double.violations).toEqual([]);
  });

  test('the merge base comes from the compare API and its ancestors from the commits API', async () => {
    const octokit = await probot.auth(repo.installationId);
    double.setCommits('acme/ml', [sha('3'), sha('2'), sha('1')], { branch: 'main' });
    double.setCommits('acme/ml', [sha('f'), sha('e'), sha('2'), sha('1')]);

    const { data: comparison } = await octokit.rest.repos.compareCommitsWithBasehead({
      owner: 'acme',
      repo: 'ml',
      basehead: `main...${sha('f')}`,
    });
    const { data: ancestors } = await octokit.rest.repos.listCommits({
      owner: 'acme',
      repo: 'ml',
      sha: sha('2'),
      per_page: 10,
    });

    expect(comparison.merge_base_commit.sha).toBe(sha('2'));
    expect([comparison.ahead_by, comparison.behind_by]).toEqual([2, 1]);
    expect(ancestors.map((commit) => [commit.sha, commit.parents[0]?.sha])).toEqual([
      [sha('2'), sha('1')],
      [sha('1'), undefined],
    ]);
    expect(double.violations).toEqual([]);
  });

  test('a token minted for one repository with contents: read reads files, cannot write checks, and is refused once revoked', async () => {
    const other = double.addRepository({ owner: 'acme', name: 'other' });
    double.setFile('acme/ml', 'main', 'README.md', 'hello');
    const appOctokit = await probot.auth();
    const { data: minted } = await appOctokit.rest.apps.createInstallationAccessToken({
      installation_id: repo.installationId,
      repository_ids: [repo.id],
      permissions: { contents: 'read' },
    });
    const runner = new Octokit({ auth: minted.token, baseUrl: double.url, log: quiet });

    await runner.rest.repos.getContent({ owner: 'acme', repo: 'ml', path: 'README.md' });
    await expect(
      runner.rest.checks.create({ owner: 'acme', repo: 'ml', name: 'x', head_sha: HEAD }),
    ).rejects.toMatchObject({
      status: 403,
    });
    await expect(
      runner.rest.repos.getContent({ owner: 'acme', repo: other.name, path: 'README.md' }),
    ).rejects.toMatchObject({
      status: 404,
    });
    await runner.rest.apps.revokeInstallationAccessToken();
    await expect(
      runner.rest.repos.getContent({ owner: 'acme', repo: 'ml', path: 'README.md' }),
    ).rejects.toMatchObject({
      status: 401,
    });
    await expect(
      new Octokit({ auth: 'ghs_neverissued', baseUrl: double.url, log: quiet }).rest.repos.get({
        owner: 'acme',
        repo: 'ml',
      }),
    ).rejects.toMatchObject({ status: 401 });

    expect(minted).toMatchObject({ repository_selection: 'selected', permissions: { contents: 'read' } });
    expect(double.issuedTokens().find((token) => token.token === minted.token)?.revokedAt).toBeInstanceOf(
      Date,
    );
    expect(double.violations.map((violation) => violation.kind)).toEqual(['authorization', 'authorization']);
  });

  test('a JWT signed with another key, an unknown route and a missing token are refused and recorded', async () => {
    const impostor = probotForDouble(double, { ...testAppCredentials(), appId: double.credentials.appId });
    const impostorOctokit = await impostor.auth(repo.installationId);
    await expect(impostorOctokit.rest.repos.get({ owner: 'acme', repo: 'ml' })).rejects.toMatchObject({
      status: 401,
    });
    const octokit = await probot.auth(repo.installationId);
    await expect(
      octokit.request('GET /repos/{owner}/{repo}/branches', { owner: 'acme', repo: 'ml' }),
    ).rejects.toMatchObject({
      status: 404,
    });
    await expect(
      new Octokit({ baseUrl: double.url, log: quiet }).rest.repos.get({ owner: 'acme', repo: 'ml' }),
    ).rejects.toMatchObject({
      status: 401,
    });

    expect(double.violations.map((violation) => violation.kind)).toEqual([
      'authentication',
      'unknown-route',
      'authentication',
    ]);
  });

  test('injected faults: 502, a secondary rate limit, an exhausted rate limit, and a lost response to a create', async () => {
    const octokit = await probot.auth(repo.installationId);
    const create = () =>
      octokit.rest.checks.create({
        owner: 'acme',
        repo: 'ml',
        name: 'fluksio',
        head_sha: HEAD,
        external_id: 'run-1',
      });
    const resetAt = new Date(Date.now() + 60_000);
    double.failNext('POST /repos/{owner}/{repo}/check-runs', { status: 502 });
    double.failNext('checks/create', secondaryRateLimit(1));
    double.failNext((request) => request.operationId === 'checks/create', primaryRateLimit(resetAt));
    double.failNext('POST /repos/{owner}/{repo}/check-runs', { dropAfterApplying: true });

    await expect(create()).rejects.toMatchObject({ status: 502 });
    await expect(create()).rejects.toMatchObject({
      status: 403,
      response: {
        headers: { 'retry-after': '1' },
        data: { message: expect.stringContaining('secondary rate limit') },
      },
    });
    await expect(create()).rejects.toMatchObject({
      status: 403,
      response: {
        headers: {
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String(Math.ceil(resetAt.getTime() / 1000)),
        },
      },
    });
    await expect(create()).rejects.toThrow();
    const { data: adopted } = await octokit.rest.checks.listForRef({
      owner: 'acme',
      repo: 'ml',
      ref: HEAD,
      check_name: 'fluksio',
    });

    expect(double.pendingFaults()).toBe(0);
    expect(double.checkRuns('acme/ml')).toHaveLength(1);
    expect(adopted.check_runs.map((checkRun) => checkRun.external_id)).toEqual(['run-1']);
    expect(
      double.requests
        .filter((request) => request.fault)
        .map((request) => `${request.status} ${request.fault}`),
    ).toEqual(['502 injected', '403 injected', '403 injected', '201 dropped']);
    expect(double.violations).toEqual([]);
  });
});

describe('webhook fixtures', () => {
  let server: Server;
  let webhookUrl: string;
  let received: Array<{ name: string; id: string; payload: Record<string, unknown> }>;

  beforeEach(async () => {
    received = [];
    const middleware = await createNodeMiddleware(
      (app) => {
        app.onAny(async (context) => {
          received.push({
            name: context.name,
            id: context.id,
            payload: context.payload as Record<string, unknown>,
          });
        });
      },
      { probot },
    );
    server = createServer((request, response) => void middleware(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    webhookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/github/webhooks`;
  });

  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const deliveries = (): WebhookDelivery[] => [
    pushPayload({ repo, after: HEAD, before: BASE }),
    pullRequestPayload({
      repo,
      action: 'synchronize',
      number: 3,
      head: { sha: HEAD, ref: 'patch-1', repoId: 77, repoFullName: 'mallory/ml' },
      base: { sha: BASE, ref: 'main' },
    }),
    issueCommentPayload({ repo, body: '/fluksio run lr=0.1', number: 3, user: { login: 'alice' } }),
    checkRunPayload({
      repo,
      action: 'requested_action',
      identifier: 'rerun',
      externalId: 'run-42',
      headSha: HEAD,
    }),
    checkRunPayload({ repo, action: 'rerequested', externalId: 'run-42', headSha: HEAD }),
    checkSuitePayload({ repo, action: 'rerequested', headSha: HEAD }),
    installationPayload({
      action: 'created',
      installationId: repo.installationId,
      account: { login: 'acme' },
      repositories: [repo],
    }),
  ];

  test("every fixture passes Probot's signature check and reaches the app naming the double's repository", async () => {
    for (const delivery of deliveries()) {
      const response = await sendWebhook(webhookUrl, delivery, double.credentials.webhookSecret);
      expect(response.status, `${delivery.name}: ${response.body}`).toBe(200);
    }

    expect(received.map((event) => `${event.name}.${String(event.payload.action)}`)).toEqual([
      'push.undefined',
      'pull_request.synchronize',
      'issue_comment.created',
      'check_run.requested_action',
      'check_run.rerequested',
      'check_suite.rerequested',
      'installation.created',
    ]);
    for (const event of received) {
      expect(event.payload.installation, event.name).toMatchObject({ id: repo.installationId });
      if (event.name !== 'installation') {
        expect(event.payload.repository, event.name).toMatchObject({
          id: repo.id,
          full_name: 'acme/ml',
          owner: { login: 'acme' },
        });
      }
    }
    expect(new Set(received.map((event) => event.id)).size).toBe(received.length);
  });

  test("a handler's context.octokit reaches the double with the installation the payload names", async () => {
    probot.on('issue_comment.created', async (context) => {
      await context.octokit.rest.reactions.createForIssueComment(
        context.repo({ comment_id: context.payload.comment.id, content: 'eyes' }),
      );
    });
    const delivery = issueCommentPayload({ repo, body: '/fluksio run', number: 3, user: { login: 'alice' } });

    const response = await sendWebhook(webhookUrl, delivery, double.credentials.webhookSecret);

    expect(response.status).toBe(200);
    expect(double.reactions('acme/ml', delivery.payload.comment.id)).toMatchObject([{ content: 'eyes' }]);
    expect(double.issuedTokens()).toMatchObject([{ installationId: repo.installationId }]);
    expect(double.violations).toEqual([]);
  });

  test('a delivery signed with the wrong secret is refused and never reaches the app', async () => {
    const response = await sendWebhook(
      webhookUrl,
      pushPayload({ repo, after: HEAD }),
      double.credentials.webhookSecret,
      {
        badSignature: true,
      },
    );

    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
    expect(received).toEqual([]);
  });

  test('an issue_comment is on a pull request, from the given user, with the installation patched in', () => {
    const { payload } = issueCommentPayload({
      repo,
      body: '/fluksio run',
      number: 5,
      user: { login: 'dependabot[bot]', type: 'Bot' },
      action: 'edited',
      previousBody: '/fluksio help',
    });

    expect(payload.issue.pull_request?.url).toBe('https://api.github.com/repos/acme/ml/pulls/5');
    expect(payload.comment).toMatchObject({
      body: '/fluksio run',
      user: { login: 'dependabot[bot]', type: 'Bot' },
    });
    expect(payload.sender.login).toBe('dependabot[bot]');
    expect(payload).toMatchObject({ action: 'edited', changes: { body: { from: '/fluksio help' } } });
    expect(payload.installation?.id).toBe(repo.installationId);
    expect(
      issueCommentPayload({ repo, body: 'x', number: 5, isPullRequest: false }).payload.issue.pull_request,
    ).toBeUndefined();
  });

  test("a pull_request payload and the double's pulls API agree on the fork's head", async () => {
    const pullRequest = {
      number: 9,
      head: { sha: HEAD, ref: 'patch-1', repoId: null },
      base: { sha: BASE, ref: 'main' },
    };
    double.setPullRequest('acme/ml', pullRequest);
    const { payload } = pullRequestPayload({ repo, action: 'opened', ...pullRequest });
    const octokit = await probot.auth(repo.installationId);
    const { data } = await octokit.rest.pulls.get({ owner: 'acme', repo: 'ml', pull_number: 9 });

    expect(payload.pull_request.head.repo).toBeNull();
    expect(data.head.repo).toBeNull();
    expect([payload.pull_request.head.sha, payload.pull_request.base.repo.id]).toEqual([
      data.head.sha,
      data.base.repo.id,
    ]);
    expect(double.violations).toEqual([]);
  });
});
