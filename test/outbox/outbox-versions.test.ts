import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { githubChecks } from '../../schemas/tables/github-checks.js';
import { bumpRenderVersion } from '../../store/outbox/bump-render-version.js';
import { createRun } from '../../store/runs/create-run.js';
import type { Database } from '../../store/db/database.js';
import { findOutboxVersions } from '../../store/outbox/find-outbox-versions.js';
import { listUnsentOutboxTargets } from '../../store/outbox/list-unsent-outbox-targets.js';
import { markOutboxSent } from '../../store/outbox/mark-outbox-sent.js';
import { recordGroupComment } from '../../store/outbox/record-group-comment.js';
import { databaseBackends } from '../helpers/test-databases.js';
import { makeRun, uniqueRepository } from '../store/store-fixtures.js';

describe.each(databaseBackends)('outbox versions on $name', ({ open }) => {
  let db: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await open());
  });
  afterAll(() => close());

  async function checkedRun(status: 'queued' | 'running' = 'running'): Promise<string> {
    const repository = uniqueRepository();
    const { run } = await createRun({ db, run: makeRun({ repository, status }) });
    await db
      .insert(githubChecks)
      .values({ runId: run.id, installationId: 1, repository, headSha: 'c'.repeat(40), name: 'fluksio' });
    return run.id;
  }

  test('a bump adds one to the render version and says the run’s state; a target without a row is null', async () => {
    const id = await checkedRun('running');
    expect(await bumpRenderVersion({ db, target: { kind: 'check', id } })).toEqual({
      renderVersion: 2,
      runStatus: 'running',
      groupId: null,
    });
    expect(await bumpRenderVersion({ db, target: { kind: 'check', id: 'no-such-run' } })).toBeNull();
    await recordGroupComment({
      db,
      group: { groupId: 'G1', installationId: 1, repository: uniqueRepository(), prNumber: 1 },
    });
    expect(await bumpRenderVersion({ db, target: { kind: 'group', id: 'G1' } })).toEqual({
      renderVersion: 2,
      runStatus: null,
      groupId: null,
    });
  });

  test('marking sent is compare-and-set: an older render never lowers the sent version', async () => {
    const id = await checkedRun();
    const target = { kind: 'check' as const, id };
    await bumpRenderVersion({ db, target });
    await bumpRenderVersion({ db, target });
    expect(await markOutboxSent({ db, target, renderedVersion: 3 })).toBe(3);
    expect(await markOutboxSent({ db, target, renderedVersion: 2 })).toBe(3);
    expect(await findOutboxVersions({ db, target })).toEqual({ renderVersion: 3, sentVersion: 3 });
    await bumpRenderVersion({ db, target });
    // A sync that rendered version 3 learns that version 4 is waiting.
    expect(await markOutboxSent({ db, target, renderedVersion: 3 })).toBe(4);
    expect(
      await markOutboxSent({ db, target: { kind: 'check', id: 'gone' }, renderedVersion: 1 }),
    ).toBeNull();
  });

  test('the reconciler lists exactly the targets GitHub does not show the latest render of', async () => {
    const unsent = await checkedRun();
    const sent = await checkedRun();
    await markOutboxSent({ db, target: { kind: 'check', id: sent }, renderedVersion: 1 });
    const listed = await listUnsentOutboxTargets({ db, limit: 1_000 });
    expect(listed).toContainEqual({ kind: 'check', id: unsent });
    expect(listed).not.toContainEqual({ kind: 'check', id: sent });
  });
});
