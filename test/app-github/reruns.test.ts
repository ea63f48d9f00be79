import { expect, test } from 'vitest';
import { checkRunPayload, checkSuitePayload, pullRequestPayload } from '../github/webhook-fixtures.js';
import { MAINTAINER, PR, SHA, type GitHubAppWorld } from './github-app-fixture.js';
import { gitHubAppWorldPerTest } from './github-app-world-per-test.js';

let world: GitHubAppWorld;

gitHubAppWorldPerTest({ opened: (opened) => (world = opened), current: () => world });

function button(externalId: string, identifier?: 'rerun' | 'rerun-no-cache', sender = MAINTAINER) {
  return checkRunPayload({
    repo: world.repo,
    action: identifier ? 'requested_action' : 'rerequested',
    ...(identifier && { identifier }),
    externalId,
    headSha: SHA.head,
    sender,
  });
}

test('the re-run button queues the same commit and params again as a new run with the same check name', async () => {
  await world.deliver(world.comment('/fluksio run lr=0.3 --no-cache'));
  const [original] = await world.runs();
  const press = button(String(original?.id), 'rerun');
  await world.deliver(press);
  const [, again] = await world.runs();
  expect(again).toMatchObject({
    commit: original?.commit,
    params: original?.params,
    noCache: true,
    checkName: original?.checkName,
    trigger: 'rerun',
    automatic: false,
    prNumber: PR,
    triggerKey: `delivery:${press.id}:${original?.id}`,
    submittedBy: MAINTAINER.login,
  });
  expect(again?.id).not.toBe(original?.id);
  expect((await world.checks()).map((check) => check.runId).sort()).toEqual([original?.id, again?.id].sort());
});

test('re-run without cache and check_run.rerequested do what they say', async () => {
  await world.deliver(world.comment('/fluksio run'));
  const [original] = await world.runs();
  await world.deliver(button(String(original?.id), 'rerun-no-cache'));
  await world.deliver(button(String(original?.id)));
  const [, noCache, rerequested] = await world.runs();
  expect(noCache).toMatchObject({ noCache: true, trigger: 'rerun', commit: SHA.head });
  expect(rerequested).toMatchObject({ noCache: false, trigger: 'rerun', commit: SHA.head });
});

test('check_suite.rerequested runs every check run of the commit again, each once', async () => {
  await world.deliver(world.comment('/fluksio run lr=0.1,0.2'));
  const sweep = await world.runs();
  await world.deliver(
    checkSuitePayload({ repo: world.repo, action: 'rerequested', headSha: SHA.head, sender: MAINTAINER }),
  );
  const again = (await world.runs()).slice(sweep.length);
  expect(again.map((run) => [run.checkName, run.params, run.trigger])).toEqual(
    sweep.map((run) => [run.checkName, run.params, 'rerun']),
  );
});

test('a re-run by someone without write permission does nothing', async () => {
  await world.deliver(world.comment('/fluksio run'));
  const [original] = await world.runs();
  await world.deliver(button(String(original?.id), 'rerun', { login: 'visitor' }));
  await world.deliver(
    checkSuitePayload({
      repo: world.repo,
      action: 'rerequested',
      headSha: SHA.head,
      sender: { login: 'visitor' },
    }),
  );
  expect(await world.runs()).toHaveLength(1);
});

test('re-running never bypasses a fork’s approval: a notice has no run, and a fork’s run re-runs only its approved SHA', async () => {
  world.setHead(SHA.forkHead, { forkId: 99 });
  await world.deliver(
    pullRequestPayload({
      repo: world.repo,
      action: 'opened',
      number: PR,
      head: { sha: SHA.forkHead, ref: 'feature', repoId: 99 },
      base: { sha: SHA.main, ref: 'main' },
    }),
  );
  const [notice] = await world.notices();
  await world.deliver(button(String(notice?.id), 'rerun'));
  await world.deliver(
    checkSuitePayload({ repo: world.repo, action: 'rerequested', headSha: SHA.forkHead, sender: MAINTAINER }),
  );
  expect(await world.runs()).toEqual([]);

  await world.deliver(world.comment(`/fluksio run --sha ${SHA.forkHead}`));
  const [approved] = await world.runs();
  world.setHead(SHA.newHead, { forkId: 99 });
  await world.deliver(button(String(approved?.id), 'rerun'));
  const [, again] = await world.runs();
  expect(again).toMatchObject({
    commit: SHA.forkHead,
    fork: true,
    trustDomain: `pr:${PR}`,
    fetchRef: `refs/pull/${PR}/head`,
  });
});

test('a check run naming a run of another repository re-runs nothing', async () => {
  await world.deliver(world.comment('/fluksio run'));
  const [original] = await world.runs();
  const other = world.double.addRepository({
    owner: 'acme',
    name: 'other',
    installationId: world.repo.installationId,
  });
  world.double.setPermission(other.fullName, MAINTAINER.login, 'admin');
  await world.deliver(
    checkRunPayload({
      repo: other,
      action: 'rerequested',
      externalId: String(original?.id),
      headSha: SHA.head,
      sender: MAINTAINER,
    }),
  );
  expect(await world.runs()).toHaveLength(1);
});
