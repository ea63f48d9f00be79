import { describe, expect, test } from 'vitest';
import { pullRequestPayload, pushPayload } from '../github/webhook-fixtures.js';
import { PR, SHA, waitFor, type GitHubAppWorld } from './github-app-fixture.js';
import { gitHubAppWorldPerTest } from './github-app-world-per-test.js';

const FORK_ID = 4_242_424;

let world: GitHubAppWorld;

gitHubAppWorldPerTest({ opened: (opened) => (world = opened), current: () => world });

function pullRequest(
  action: 'opened' | 'synchronize' | 'reopened' | 'closed',
  head: string,
  forkId?: number | null,
  before?: string,
) {
  return pullRequestPayload({
    repo: world.repo,
    action,
    number: PR,
    ...(before !== undefined && { before }),
    head: { sha: head, ref: 'feature', ...(forkId !== undefined && { repoId: forkId }) },
    base: { sha: SHA.main, ref: 'main' },
  });
}

describe('push', () => {
  test('a push to a branch on.push names runs the pushed commit with the defaults', async () => {
    const push = pushPayload({ repo: world.repo, ref: 'main', after: SHA.main });
    await world.deliver(push);
    expect(await world.runs()).toMatchObject([
      {
        commit: SHA.main,
        params: { lr: 0.01, seed: 0 },
        trigger: 'push',
        automatic: true,
        prNumber: null,
        baseRef: null,
        trustDomain: 'trusted',
        triggerKey: `delivery:${push.id}:0`,
      },
    ]);
    expect(await world.checks()).toMatchObject([{ headSha: SHA.main, name: 'fluksio' }]);
  });

  test('a dependency bot’s push runs nothing, even to a branch on.push names: its pull request waits for approval', async () => {
    await world.deliver(
      pushPayload({
        repo: world.repo,
        ref: 'main',
        after: SHA.main,
        sender: { login: 'dependabot[bot]', type: 'Bot' },
      }),
    );
    expect(await world.runs()).toEqual([]);
    // Another app's bot (one committing refreshed data, say) is run as any pusher is.
    await world.deliver(
      pushPayload({
        repo: world.repo,
        ref: 'main',
        after: SHA.main,
        sender: { login: 'data-refresher[bot]', type: 'Bot' },
      }),
    );
    expect(await world.runs()).toMatchObject([{ commit: SHA.main, trustDomain: 'trusted' }]);
  });

  test('a push to another branch, a deleted branch or a tag runs nothing', async () => {
    await world.deliver(pushPayload({ repo: world.repo, ref: 'feature', after: SHA.head }));
    await world.deliver(pushPayload({ repo: world.repo, ref: 'main', after: '0'.repeat(40) }));
    await world.deliver(pushPayload({ repo: world.repo, ref: 'refs/tags/v1', after: SHA.main }));
    expect(await world.runs()).toEqual([]);
  });

  test('a push of a broken fluksio.yml gets an action_required notice naming every problem, and no run', async () => {
    world.double.setFile(world.repo.fullName, SHA.broken, 'fluksio.yml', 'version: 2\nstages: {}\n');
    await world.deliver(pushPayload({ repo: world.repo, ref: 'main', after: SHA.broken }));
    expect(await world.runs()).toEqual([]);
    const [notice] = await world.notices();
    expect(notice).toMatchObject({ kind: 'broken-pipeline', headSha: SHA.broken });
    expect(JSON.stringify(notice?.body)).toContain('expected version: 1');
    const checkRun = await waitFor('the action_required check run', () =>
      world.double.checkRuns(world.repo.fullName).find((run) => run.headSha === SHA.broken),
    );
    expect(checkRun.conclusion).toBe('action_required');
  });

  test('a fork’s fluksio.yml over 256 KiB is a broken pipeline naming its size, on its check run, never parsed', async () => {
    world.setHead(SHA.broken, { forkId: 4_242_424 });
    const huge = `version: 1\n${`#${'x'.repeat(1022)}\n`.repeat(300)}stages: {}\n`;
    world.double.setFile(world.repo.fullName, SHA.broken, 'fluksio.yml', huge);
    await world.deliver(
      pullRequestPayload({
        repo: world.repo,
        action: 'synchronize',
        number: PR,
        head: { sha: SHA.broken, ref: 'feature', repoId: 4_242_424 },
        base: { sha: SHA.main, ref: 'main' },
      }),
    );
    expect(await world.runs()).toEqual([]);
    const [notice] = await world.notices();
    expect(notice).toMatchObject({ kind: 'broken-pipeline', headSha: SHA.broken });
    expect(JSON.stringify(notice?.body)).toContain(
      'the file is 307,222 bytes; a pipeline file, and each file read beside it, is at most 262,144 bytes (256 KiB)',
    );
    const checkRun = await waitFor('the action_required check run', () =>
      world.double.checkRuns(world.repo.fullName).find((run) => run.headSha === SHA.broken),
    );
    expect(checkRun.conclusion).toBe('action_required');
    expect(JSON.stringify(checkRun)).toContain('is at most 262,144 bytes');
  });

  test('a repository without fluksio.yml gets nothing at all', async () => {
    await world.deliver(pushPayload({ repo: world.repo, ref: 'main', after: SHA.broken }));
    expect(await world.runs()).toEqual([]);
    expect(await world.notices()).toEqual([]);
  });

  test('an installation of an owner not allowed: nothing runs and nothing is said', async () => {
    const stranger = world.double.addRepository({ owner: 'stranger', name: 'model' });
    world.double.setFile(
      stranger.fullName,
      SHA.main,
      'fluksio.yml',
      'version: 1\nstages: { a: { cmd: "true" } }\non: { push: { branches: [main] } }\n',
    );
    const push = pushPayload({ repo: stranger, ref: 'main', after: SHA.main });
    const delivery = await world.deliver(push);
    expect(delivery.processedAt).not.toBeNull();
    expect(await world.runs()).toEqual([]);
    expect(world.double.requests.filter((request) => request.path.includes('stranger'))).toEqual([]);
    expect(world.logs()).toContain('the owner is not allowed');
  });
});

describe('pull requests', () => {
  test('opened runs the head automatically with the defaults', async () => {
    await world.deliver(pullRequest('opened', SHA.head));
    expect(await world.runs()).toMatchObject([
      {
        commit: SHA.head,
        trigger: 'pull_request',
        automatic: true,
        prNumber: PR,
        baseRef: 'main',
        fork: false,
      },
    ]);
  });

  test('a new push cancels the pull request’s automatic runs, not the runs someone asked for', async () => {
    await world.deliver(pullRequest('opened', SHA.head));
    await world.deliver(world.comment('/fluksio run lr=0.5'));
    world.setHead(SHA.newHead);
    await world.deliver(pullRequest('synchronize', SHA.newHead));
    const runs = await world.runs();
    expect(runs.map((run) => [run.trigger, run.commit, run.status])).toEqual([
      ['pull_request', SHA.head, 'cancelled'],
      ['comment', SHA.head, 'queued'],
      ['pull_request', SHA.newHead, 'queued'],
    ]);
    expect(runs[0]?.statusReason).toMatch(/Superseded: pull request #7 was pushed to/);
  });

  test('a push event handled after the next one (a retry, a slow worker) neither cancels the new head’s runs nor runs its old head', async () => {
    world.setHead(SHA.newHead);
    await world.deliver(pullRequest('synchronize', SHA.newHead));
    await world.deliver(pullRequest('synchronize', SHA.head));
    const runs = await world.runs();
    expect(runs.map((run) => [run.commit, run.status])).toEqual([[SHA.newHead, 'queued']]);
    expect(world.logs()).toContain('pull request event for a head it has moved on from');
  });

  test('two events of one head handled at the same moment make one run', async () => {
    // Two bodies (the same body twice is one delivery, replay-attacks.test.ts).
    const first = pullRequest('opened', SHA.head);
    const second = pullRequest('synchronize', SHA.head);
    const answers = await Promise.all([world.send(first), world.send(second)]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    await Promise.all([world.settled(first.id), world.settled(second.id)]);
    const runs = await world.runs();
    expect(runs.map((run) => [run.commit, run.status])).toEqual([[SHA.head, 'queued']]);
    expect(await world.checks()).toHaveLength(1);
    expect(world.logs()).toContain('an automatic run of this head is queued or running already');
  });

  test('a head pushed again after another (a force-push back) runs again', async () => {
    // GitHub's synchronize names the head it moved from: pushing a head back is another body.
    await world.deliver(pullRequest('synchronize', SHA.head, undefined, SHA.main));
    world.setHead(SHA.newHead);
    await world.deliver(pullRequest('synchronize', SHA.newHead, undefined, SHA.head));
    world.setHead(SHA.head);
    await world.deliver(pullRequest('synchronize', SHA.head, undefined, SHA.newHead));
    const runs = await world.runs();
    expect(runs.map((run) => [run.commit, run.status])).toEqual([
      [SHA.head, 'cancelled'],
      [SHA.newHead, 'cancelled'],
      [SHA.head, 'queued'],
    ]);
  });

  test('closed runs nothing', async () => {
    await world.deliver(pullRequest('closed', SHA.head));
    expect(await world.runs()).toEqual([]);
  });
});

describe('forks', () => {
  test('a fork’s pull request never runs automatically: an action_required check run prints the exact command', async () => {
    world.setHead(SHA.forkHead, { forkId: FORK_ID });
    await world.deliver(pullRequest('opened', SHA.forkHead, FORK_ID));
    expect(await world.runs()).toEqual([]);
    expect(await world.notices()).toMatchObject([
      { id: `approval:${world.repo.fullName}:${SHA.forkHead}`, kind: 'approval', headSha: SHA.forkHead },
    ]);
    const checkRun = await waitFor(
      'the approval check run',
      () => world.double.checkRuns(world.repo.fullName)[0],
    );
    expect(checkRun.conclusion).toBe('action_required');
    expect(checkRun.output.summary).toContain(`/fluksio run --sha ${SHA.forkHead}`);
  });

  test('a pull request whose head repository was deleted counts as a fork', async () => {
    world.setHead(SHA.forkHead, { forkId: null });
    await world.deliver(pullRequest('opened', SHA.forkHead, null));
    expect(await world.runs()).toEqual([]);
    expect((await world.notices()).map((notice) => notice.kind)).toEqual(['approval']);
  });

  test('/fluksio run without --sha, or with an old one, is refused on a fork', async () => {
    world.setHead(SHA.forkHead, { forkId: FORK_ID });
    const bare = world.comment('/fluksio run lr=0.1');
    await world.deliver(bare);
    await world.deliver(world.comment(`/fluksio run --sha ${SHA.head.slice(0, 8)}`));
    expect(await world.runs()).toEqual([]);
    const [first, second] = world.replies();
    expect(first).toContain(`/fluksio run --sha ${SHA.forkHead}`);
    expect(first).toMatch(/comes from a fork/);
    expect(second).toContain(SHA.forkHead);
    expect(world.reactions(bare.payload.comment.id)).toEqual(['eyes', 'confused']);
  });

  test('on a fork, a prefix of the head is no approval: the whole SHA is asked for', async () => {
    world.setHead(SHA.forkHead, { forkId: FORK_ID });
    await world.deliver(world.comment(`/fluksio run --sha ${SHA.forkHead.slice(0, 12)}`));
    expect(await world.runs()).toEqual([]);
    const [reply] = world.replies();
    expect(reply).toContain(`not a prefix like \`${SHA.forkHead.slice(0, 12)}\``);
    expect(reply).toContain(`/fluksio run --sha ${SHA.forkHead}`);
  });

  test('/fluksio run --sha <head> runs exactly that commit, in the pull request’s own trust domain', async () => {
    world.setHead(SHA.forkHead, { forkId: FORK_ID });
    await world.deliver(world.comment(`/fluksio run --sha ${SHA.forkHead} lr=0.1`));
    expect(await world.runs()).toMatchObject([
      {
        commit: SHA.forkHead,
        trustDomain: `pr:${PR}`,
        fork: true,
        fetchRef: `refs/pull/${PR}/head`,
        cloneUrl: `https://github.com/${world.repo.fullName}.git`,
        params: { lr: 0.1, seed: 0 },
      },
    ]);
  });
});

describe('bots', () => {
  const DEPENDABOT = { login: 'dependabot[bot]', type: 'Bot' as const };

  test('a pull request a bot opens or pushes to, from a branch of the repository, never runs automatically: it waits for approval as a fork’s does', async () => {
    world.setHead(SHA.head, { user: DEPENDABOT });
    await world.deliver(
      pullRequestPayload({
        repo: world.repo,
        action: 'opened',
        number: PR,
        head: { sha: SHA.head, ref: 'dependabot/pip/torch-2.9' },
        base: { sha: SHA.main, ref: 'main' },
        sender: DEPENDABOT,
      }),
    );
    expect(await world.runs()).toEqual([]);
    expect(await world.notices()).toMatchObject([
      { kind: 'approval', headSha: SHA.head, body: { pushedBy: 'dependabot[bot]' } },
    ]);
    const checkRun = await waitFor(
      'the approval check run',
      () => world.double.checkRuns(world.repo.fullName)[0],
    );
    expect(checkRun.conclusion).toBe('action_required');
    expect(checkRun.output.title).toBe('Approval needed: this commit was pushed by dependabot[bot]');
    expect(checkRun.output.summary).toContain(`/fluksio run --sha ${SHA.head}`);

    // A maintainer who pushes to it vouches for what they pushed.
    await world.deliver(pullRequest('synchronize', SHA.head));
    expect(await world.runs()).toMatchObject([{ commit: SHA.head, trustDomain: 'trusted', automatic: true }]);
  });

  test('on a bot’s pull request, /fluksio run must name the whole head it approves; with it, the head runs trusted', async () => {
    world.setHead(SHA.head, { user: DEPENDABOT });
    await world.deliver(world.comment('/fluksio run lr=0.1'));
    await world.deliver(world.comment(`/fluksio run --sha ${SHA.head.slice(0, 12)}`));
    expect(await world.runs()).toEqual([]);
    const [bare, prefix] = world.replies();
    expect(bare).toContain('opened by the bot `dependabot[bot]`');
    expect(bare).toContain(`/fluksio run --sha ${SHA.head}`);
    expect(prefix).toContain(`not a prefix like \`${SHA.head.slice(0, 12)}\``);

    await world.deliver(world.comment(`/fluksio run --sha ${SHA.head} lr=0.1`));
    expect(await world.runs()).toMatchObject([
      { commit: SHA.head, trustDomain: 'trusted', fork: false, params: { lr: 0.1, seed: 0 } },
    ]);
  });
});

describe('bots, pushing to a person’s pull request', () => {
  const FORMATTER = { login: 'pre-commit-ci[bot]', type: 'Bot' as const };

  test('a head a bot pushed to a person’s pull request waits for approval, and /fluksio run must name it whole', async () => {
    await world.deliver(
      pullRequestPayload({
        repo: world.repo,
        action: 'synchronize',
        number: PR,
        head: { sha: SHA.head, ref: 'feature' },
        base: { sha: SHA.main, ref: 'main' },
        sender: FORMATTER,
      }),
    );
    expect(await world.runs()).toEqual([]);
    expect(await world.notices()).toMatchObject([
      { kind: 'approval', headSha: SHA.head, body: { pushedBy: 'pre-commit-ci[bot]' } },
    ]);

    // A bare command would run what the bot pushed, which nobody named.
    await world.deliver(world.comment('/fluksio run lr=0.1'));
    expect(await world.runs()).toEqual([]);
    const [bare] = world.replies();
    expect(bare).toContain("this pull request's head was pushed by the bot `pre-commit-ci[bot]`");
    expect(bare).toContain(`/fluksio run --sha ${SHA.head}`);

    await world.deliver(world.comment(`/fluksio run --sha ${SHA.head} lr=0.1`));
    expect(await world.runs()).toMatchObject([
      { commit: SHA.head, trustDomain: 'trusted', fork: false, params: { lr: 0.1, seed: 0 } },
    ]);
  });

  test('a /fluksio run handled before the bot’s push event, or on a pipeline without on.pull_request, must still name the bot’s head whole', async () => {
    // No synchronize was handled (none came yet, or it found nothing to hold): GitHub's
    // record of the head commit says who made it.
    world.double.setCommits(world.repo.fullName, [
      { sha: SHA.head, author: FORMATTER, committer: FORMATTER },
      { sha: SHA.main },
    ]);
    await world.deliver(world.comment('/fluksio run lr=0.1'));
    expect(await world.runs()).toEqual([]);
    const [bare] = world.replies();
    expect(bare).toContain("this pull request's head was pushed by the bot `pre-commit-ci[bot]`");
    expect(bare).toContain(`/fluksio run --sha ${SHA.head}`);
    await world.deliver(world.comment(`/fluksio run --sha ${SHA.head.slice(0, 12)} lr=0.1`));
    expect(await world.runs()).toEqual([]);

    await world.deliver(world.comment(`/fluksio run --sha ${SHA.head} lr=0.1`));
    expect(await world.runs()).toMatchObject([
      { commit: SHA.head, trustDomain: 'trusted', params: { lr: 0.1 } },
    ]);
  });

  test('a person’s head (a bot only committed further back) runs with a bare /fluksio run', async () => {
    world.double.setCommits(world.repo.fullName, [{ sha: SHA.head }, { sha: SHA.main, author: FORMATTER }]);
    await world.deliver(world.comment('/fluksio run lr=0.1'));
    expect(await world.runs()).toMatchObject([{ commit: SHA.head, params: { lr: 0.1 } }]);
  });
});

describe('bots, reopened', () => {
  const DEPENDABOT = { login: 'dependabot[bot]', type: 'Bot' as const };

  test('a bot’s pull request reopened by a person still waits for approval: reopening pushes nothing and reviews nothing', async () => {
    world.setHead(SHA.head, { user: DEPENDABOT });
    await world.deliver(
      pullRequestPayload({
        repo: world.repo,
        action: 'reopened',
        number: PR,
        head: { sha: SHA.head, ref: 'dependabot/pip/torch-2.9' },
        base: { sha: SHA.main, ref: 'main' },
        user: DEPENDABOT,
      }),
    );
    expect(await world.runs()).toEqual([]);
    expect(await world.notices()).toMatchObject([
      { kind: 'approval', headSha: SHA.head, body: { pushedBy: 'dependabot[bot]' } },
    ]);
  });
});
