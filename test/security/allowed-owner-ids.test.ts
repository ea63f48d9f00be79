// FLUKSIO_ALLOWED_OWNERS pins an owner to its account id (`acme:1234567`): GitHub frees a
// name when its account is renamed or deleted, and whoever registers it next could install
// the App under it. Real deliveries (signed, over HTTP) against the GitHub double.
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { accountId } from '../github/github-shapes.js';
import { pushPayload } from '../github/webhook-fixtures.js';
import {
  closeGitHubAppDatabase,
  openGitHubAppDatabase,
  openGitHubAppWorld,
  SHA,
  type GitHubAppWorld,
} from '../app-github/github-app-fixture.js';

let world: GitHubAppWorld | null = null;

beforeAll(openGitHubAppDatabase);
afterAll(closeGitHubAppDatabase);
afterEach(async () => {
  await world?.close();
  expect(world?.double.violations ?? []).toEqual([]);
  world = null;
});

/** The account id GitHub's payloads give the fixture's owner, acme. */
const ACME_ID = accountId({ login: 'acme' });

async function pushed(allowedOwners: string) {
  world = await openGitHubAppWorld({ env: { FLUKSIO_ALLOWED_OWNERS: allowedOwners } });
  const delivery = await world.deliver(pushPayload({ repo: world.repo, ref: 'main', after: SHA.main }));
  expect(delivery.processedAt).not.toBeNull();
  return { runs: await world.runs(), logs: world.logs() };
}

test('an owner pinned to its account id runs', async () => {
  const { runs } = await pushed(`acme:${ACME_ID}`);
  expect(runs).toHaveLength(1);
});

test('another account under a pinned name (the name freed and registered again) runs nothing, and the log says why', async () => {
  const { runs, logs } = await pushed(`acme:${ACME_ID + 1}`);
  expect(runs).toEqual([]);
  expect(logs).toContain(`the name acme is pinned to account ${ACME_ID + 1}, and this is account ${ACME_ID}`);
});

test('a pinned account renamed since runs under its new name', async () => {
  const { runs } = await pushed(`acme-old-name:${ACME_ID}`);
  expect(runs).toHaveLength(1);
});

test('an owner written by name alone is matched by name', async () => {
  const { runs } = await pushed('octocat,Acme');
  expect(runs).toHaveLength(1);
});
