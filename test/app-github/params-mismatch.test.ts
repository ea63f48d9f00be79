import { afterAll, beforeAll, expect, test } from 'vitest';
import { ControlPlaneClient } from '../../client/control-plane-client.js';
import { digestOf } from '../../schemas/canonical-json.js';
import { pushPayload } from '../github/webhook-fixtures.js';
import {
  closeGitHubAppDatabase,
  openGitHubAppDatabase,
  openGitHubAppWorld,
  completedCheckRun,
  registerAcmeRunner,
  SHA,
} from './github-app-fixture.js';

beforeAll(openGitHubAppDatabase);
afterAll(closeGitHubAppDatabase);

/**
 * Issue 10 item 4, over real HTTP: a push queues a run with `lr: 0.01, seed: 0`; a runner
 * whose pipeline declares `lr` a string (another version of the pipeline, or of the runner)
 * claims it and starts it with the params as it resolved them. The control plane refuses
 * to start what was not asked for: the run fails at once with each difference named, the
 * runner is told not to run it, and the check run says why.
 */
test('a runner that resolves the params otherwise than queued: the run fails at its start, the check run names the param', async () => {
  const world = await openGitHubAppWorld();
  try {
    world.double.setCommits(world.repo.fullName, [SHA.main], { branch: 'main' });
    const token = await registerAcmeRunner(world, ['gpu']);
    await world.deliver(pushPayload({ repo: world.repo, ref: 'main', after: SHA.main }));
    const client = new ControlPlaneClient({ url: world.plane.url, token, retries: 0 });
    const claim = await client.claim(5, false);
    if (!claim) throw new Error('the pushed commit’s run was not claimed');
    expect(claim.run.params).toEqual({ lr: 0.01, seed: 0 });

    const resolved = { lr: '0.01', seed: 0 };
    const run = { runId: claim.run.id, lease: claim.lease };
    const reply = await client.start(run, {
      codeDigest: 'c'.repeat(64),
      envDigest: 'e'.repeat(64),
      params: resolved,
      paramsDigest: digestOf(resolved),
    });
    const reason =
      'The runner resolved the params differently from how the run was queued, so nothing ran: ' +
      `'lr' was queued as 0.01 (a number) and resolved as "0.01" (a string)`;
    expect(reply).toEqual({ status: 'failed', reason });
    const [row] = await world.runs();
    expect(row).toMatchObject({ status: 'failed', statusReason: reason, params: { lr: 0.01, seed: 0 } });

    const checkRun = await completedCheckRun(world, claim.run.id);
    expect(checkRun.conclusion).toBe('failure');
    expect(checkRun.output.title).toContain(`'lr' was queued as 0.01 (a number) and resolved as "0.01"`);
    // Nothing may be written under the lease of a run that never started.
    await expect(client.heartbeat(run)).rejects.toThrow(/stale/);
  } finally {
    await world.close();
  }
  expect(world.double.violations).toEqual([]);
});
