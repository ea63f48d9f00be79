import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runners } from '../../schemas/tables/runners.js';
import { controlPlaneGauges } from '../../store/runs/control-plane-gauges.js';
import type { Database } from '../../store/db/database.js';
import { databaseBackends } from '../helpers/test-databases.js';
import { claim, queueRun, registerRunner, uniqueOwner } from './control-plane-fixtures.js';

describe.each(databaseBackends)('control plane gauges on $name', ({ open }) => {
  let db: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await open());
  });
  afterAll(() => close());

  test('queue depth by label set, runs by status, runners online', async () => {
    const owner = uniqueOwner();
    const repository = `${owner}/train`;
    await queueRun(db, { repository, labels: ['gpu', 'a100'] });
    await queueRun(db, { repository, labels: ['a100', 'gpu'] });
    await queueRun(db, { repository, labels: [] });
    await queueRun(db, { repository, labels: ['cpu'] });
    const runner = await registerRunner(db, { owner, labels: ['cpu'] });
    await claim(db, runner);
    const quiet = await registerRunner(db, { owner });
    await db
      .update(runners)
      .set({ lastSeenAt: sql`now() - interval '1 hour'` })
      .where(eq(runners.id, quiet.id));

    expect(await controlPlaneGauges({ db, onlineWindowMs: 120_000 })).toEqual({
      queueDepth: [
        { labels: ['a100', 'gpu'], count: 2 },
        { labels: ['cpu'], count: 1 },
      ],
      runsByStatus: [
        { status: 'queued', count: 3 },
        { status: 'running', count: 1 },
      ],
      runnersOnline: 1,
    });
  });
});
