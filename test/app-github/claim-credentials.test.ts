import { beforeEach, expect, test } from 'vitest';
import type { Claim } from '../../schemas/protocol/claim.js';
import {
  openGitHubAppWorld,
  completedCheckRun,
  registerAcmeRunner,
  SHA,
  waitFor,
  type GitHubAppWorld,
} from './github-app-fixture.js';
import { gitHubAppWorldPerTest } from './github-app-world-per-test.js';
import { ranAsClaimed } from '../helpers/ran-as-claimed.js';

let world: GitHubAppWorld;
let runnerToken: string;

gitHubAppWorldPerTest({ opened: (opened) => (world = opened), current: () => world });
beforeEach(async () => {
  runnerToken = await registerAcmeRunner(world, ['gpu']);
});

async function call(path: string, json: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${world.plane.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${runnerToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(json),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

function tokenIn(extraHeader: string | null): string {
  const match = /^AUTHORIZATION: basic (.+)$/.exec(extraHeader ?? '');
  const decoded = Buffer.from(match?.[1] ?? '', 'base64').toString('utf8');
  expect(decoded).toMatch(/^x-access-token:/);
  return decoded.slice('x-access-token:'.length);
}

test('a claimed run of a GitHub repository carries a read-only token for that one repository, revoked once fetched', async () => {
  await world.deliver(world.comment('/fluksio run'));
  const claimed = await call('/api/v1/runner/claim', { waitSeconds: 0 });
  expect(claimed.status).toBe(200);
  const claim = claimed.body as unknown as Claim;
  expect(claim.commit).toBe(SHA.head);
  const token = tokenIn(claim.git.extraHeader);
  const issued = world.double.issuedTokens().find((candidate) => candidate.token === token);
  expect(issued).toMatchObject({
    installationId: world.repo.installationId,
    repositoryIds: [world.repo.id],
    permissions: { contents: 'read' },
    revokedAt: null,
  });
  expect(world.logs()).not.toContain(token);
  expect(JSON.stringify(await world.runs())).not.toContain(token);

  const fetched = await call(`/api/v1/runs/${claim.run.id}/fetched`, {
    lease: claim.lease,
    extraHeader: claim.git.extraHeader,
  });
  expect(fetched).toEqual({ status: 200, body: { revoked: true } });
  expect(
    world.double.issuedTokens().find((candidate) => candidate.token === token)?.revokedAt,
  ).not.toBeNull();
  expect(world.logs()).not.toContain(token);
});

test('fetched under a stale lease is refused and revokes nothing', async () => {
  await world.deliver(world.comment('/fluksio run'));
  const claim = (await call('/api/v1/runner/claim', { waitSeconds: 0 })).body as unknown as Claim;
  const stale = await call(`/api/v1/runs/${claim.run.id}/fetched`, {
    lease: 'f'.repeat(64),
    extraHeader: claim.git.extraHeader,
  });
  expect(stale.status).toBe(409);
  expect(
    world.double.issuedTokens().find((issued) => issued.token === tokenIn(claim.git.extraHeader))?.revokedAt,
  ).toBeNull();
});

test('when GitHub grants no token the run goes back to the queue and the runner is told to try again', async () => {
  await world.deliver(world.comment('/fluksio run'));
  world.double.failNext('POST /app/installations/{installation_id}/access_tokens', { status: 502 });
  const refused = await call('/api/v1/runner/claim', { waitSeconds: 0 });
  expect(refused.status).toBe(503);
  const [run] = await world.runs();
  expect(run).toMatchObject({
    status: 'queued',
    statusReason: 'GitHub did not grant a token to fetch the code; queued again',
  });
  const claimed = await call('/api/v1/runner/claim', { waitSeconds: 0 });
  expect(claimed.status).toBe(200);
});

test.each([
  ['the App lost the repository', 404],
  ['the repository was renamed', 422],
  ['the installation is suspended', 403],
])(
  'when GitHub refuses the token for good (%s) the run fails saying why, and the next run is claimed',
  async (_why, status) => {
    await world.deliver(world.comment('/fluksio run lr=0.1'));
    await world.deliver(world.comment('/fluksio run lr=0.2'));
    world.double.failNext('POST /app/installations/{installation_id}/access_tokens', { status });
    const refused = await call('/api/v1/runner/claim', { waitSeconds: 0 });
    expect(refused.status).toBe(204);
    const [first, second] = await world.runs();
    expect(first?.status).toBe('failed');
    expect(first?.statusReason).toMatch(
      new RegExp(
        `^GitHub refused a token to fetch ${world.repo.fullName} \\(HTTP ${status}\\b.*is the App still installed on the repository`,
      ),
    );
    const claimed = await call('/api/v1/runner/claim', { waitSeconds: 0 });
    expect(claimed.status).toBe(200);
    expect((claimed.body as unknown as Claim).run.id).toBe(second?.id);
    await waitFor(
      'the failed check run',
      () =>
        world.double.checkRuns(world.repo.fullName).find((check) => check.externalId === first?.id)
          ?.conclusion === 'failure',
    );
  },
);

test('the runner’s state changes reach the check run: claimed → in progress, finished → completed', async () => {
  await world.deliver(world.comment('/fluksio run'));
  const [run] = await world.runs();
  const checkRun = () =>
    world.double.checkRuns(world.repo.fullName).find((candidate) => candidate.externalId === run?.id);
  await waitFor('the queued check run', () => checkRun()?.status === 'queued');
  const claim = (await call('/api/v1/runner/claim', { waitSeconds: 0 })).body as unknown as Claim;
  await call(`/api/v1/runs/${claim.run.id}/start`, {
    lease: claim.lease,
    codeDigest: 'c'.repeat(64),
    envDigest: 'e'.repeat(64),
    ...ranAsClaimed(claim),
  });
  // A running run's check run is refreshed at most every ~10 s (DESIGN §8), its first update too.
  await waitFor('in progress', () => checkRun()?.status === 'in_progress', 20_000);
  await call(`/api/v1/runs/${claim.run.id}/finish`, {
    lease: claim.lease,
    status: 'succeeded',
    reason: null,
    metrics: { accuracy: 0.9 },
  });
  const done = await waitFor('completed', () => checkRun()?.status === 'completed' && checkRun());
  expect(done.conclusion).toBe('success');
  expect(
    world.double.checkRuns(world.repo.fullName).filter((candidate) => candidate.externalId === run?.id),
  ).toHaveLength(1);
});

test('/fluksio cancel reaches the runner and the check run', async () => {
  // Postgres looked at again only once a minute: the watch hears the cancel from the run bell.
  await world.close();
  world = await openGitHubAppWorld({ env: { FLUKSIO_CLAIM_RECHECK: '1m' } });
  runnerToken = await registerAcmeRunner(world, ['gpu']);
  await world.deliver(world.comment('/fluksio run'));
  const claim = (await call('/api/v1/runner/claim', { waitSeconds: 0 })).body as unknown as Claim;
  const watching = call(`/api/v1/runs/${claim.run.id}/watch`, { lease: claim.lease, waitSeconds: 55 }).then(
    (answer) => ({ ...answer, at: Date.now() }),
  );
  await waitFor('the watch to park', async () =>
    /^fluksio_cancel_watches_parked 1$/m.test(await (await fetch(`${world.plane.url}/metrics`)).text()),
  );
  await world.deliver(world.comment('/fluksio cancel'));
  const delivered = Date.now();
  const watched = await watching;
  expect(watched.body).toMatchObject({ cancel: true, finishAs: 'cancelled' });
  // Long before the watch's wait or a re-check could have answered it.
  expect(watched.at - delivered).toBeLessThan(20_000);
  const beat = await call(`/api/v1/runs/${claim.run.id}/heartbeat`, { lease: claim.lease });
  expect(beat.body).toMatchObject({ cancel: true, finishAs: 'cancelled' });
  await call(`/api/v1/runs/${claim.run.id}/finish`, {
    lease: claim.lease,
    status: 'cancelled',
    reason: 'Cancelled',
    metrics: {},
  });
  const done = await completedCheckRun(world, claim.run.id);
  expect(done.conclusion).toBe('cancelled');
});
