import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { Problem } from '../../core/problem.js';
import { findGitHubNotice } from '../../store/outbox/find-github-notice.js';
import { recordNotice } from '../../store/outbox/record-notice.js';
import {
  closeOutboxDatabase,
  openOutboxDatabase,
  openOutboxWorld,
  waitFor,
  type OutboxWorld,
} from './outbox-fixture.js';

const HEAD = 'b'.repeat(40);

let world: OutboxWorld;

beforeAll(openOutboxDatabase);
afterAll(closeOutboxDatabase);
beforeEach(async () => {
  world = await openOutboxWorld();
});
afterEach(async () => {
  await world.close();
  expect(world.double.violations).toEqual([]);
});

async function sent(id: string): Promise<boolean> {
  const notice = await findGitHubNotice({ db: world.db, id });
  return notice !== null && notice.sentVersion === notice.renderVersion;
}

describe('a notice', () => {
  test('a fork’s approval becomes one action_required check run, adopted after a lost response', async () => {
    const id = `approval:${world.repository}:${HEAD}`;
    await recordNotice({
      db: world.db,
      notice: {
        id,
        installationId: world.installationId,
        repository: world.repository,
        headSha: HEAD,
        name: 'fluksio',
        kind: 'approval',
        body: { kind: 'approval', headSha: HEAD, prNumber: 12 },
      },
    });
    world.double.failNext('POST /repos/{owner}/{repo}/check-runs', { dropAfterApplying: true });
    const outbox = await world.openOutbox();
    await outbox.notifyNotice(id);
    await waitFor('sent', () => sent(id));

    const checkRuns = world.double.checkRuns(world.repository);
    expect(checkRuns).toHaveLength(1);
    expect(checkRuns[0]).toMatchObject({
      externalId: id,
      headSha: HEAD,
      status: 'completed',
      conclusion: 'action_required',
    });
    expect(checkRuns[0]?.output.summary).toContain(`/fluksio run --sha ${HEAD}`);
    expect((await findGitHubNotice({ db: world.db, id }))?.checkRunId).toBe(checkRuns[0]?.id);
  });

  test('a broken fluksio.yml with 60 problems annotates each line once, also when sent again', async () => {
    const id = `broken-pipeline:${world.repository}:${HEAD}`;
    const problems: Problem[] = Array.from({ length: 60 }, (_, index) => ({
      path: `stages.s${index}.cmd`,
      message: 'is required',
      line: index + 1,
    }));
    await recordNotice({
      db: world.db,
      notice: {
        id,
        installationId: world.installationId,
        repository: world.repository,
        headSha: HEAD,
        name: 'fluksio',
        kind: 'broken-pipeline',
        body: { kind: 'broken-pipeline', problems, path: 'fluksio.yml', sha: HEAD },
      },
    });
    const outbox = await world.openOutbox();
    await outbox.notifyNotice(id);
    await waitFor('sent', () => sent(id));
    await outbox.notifyNotice(id);
    await waitFor('sent again', () => sent(id));

    const [checkRun] = world.double.checkRuns(world.repository);
    expect(checkRun?.annotations.map((note) => note.start_line)).toEqual(
      problems.map((problem) => problem.line),
    );
    const pages = checkRun?.history.map(
      (change) => ((change.body.output as { annotations?: unknown[] }).annotations ?? []).length,
    );
    // 50 with the create, 10 in an update; sent again, GitHub's count says none is missing.
    expect(pages).toEqual([50, 10, 0]);
  });
});
