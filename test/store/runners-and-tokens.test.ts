import { randomBytes } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ApiTokenExistsError } from '../../store/tokens/api-token-exists-error.js';
import { createApiToken } from '../../store/tokens/create-api-token.js';
import { createRunner } from '../../store/runners/create-runner.js';
import type { Database } from '../../store/db/database.js';
import { findApiTokenByHash } from '../../store/tokens/find-api-token-by-hash.js';
import { findRunnerByTokenHash } from '../../store/runners/find-runner-by-token-hash.js';
import { listRunners } from '../../store/runners/list-runners.js';
import { removeRunner } from '../../store/runners/remove-runner.js';
import { revokeApiToken } from '../../store/tokens/revoke-api-token.js';
import { RunnerExistsError } from '../../store/runners/runner-exists-error.js';
import { databaseBackends } from '../helpers/test-databases.js';
import { runners } from '../../schemas/tables/runners.js';

const unique = (prefix: string): string => `${prefix}-${randomBytes(4).toString('hex')}`;
const hash = (): string => randomBytes(32).toString('hex');

describe.each(databaseBackends)('runners and API tokens on $name', ({ open }) => {
  let db: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await open());
  });
  afterAll(() => close());

  /** How long ago `at` was, by the database's clock now (not its transaction's start). */
  async function msSince(at: Date): Promise<number> {
    const [row] = await db
      .select({
        ms: sql<string>`extract(epoch from clock_timestamp() - ${at.toISOString()}::timestamptz) * 1000`,
      })
      .from(runners)
      .limit(1);
    return Number(row?.ms);
  }

  /**
   * Runs `attempt` until the sighting it returns is less than `ms` old once it is done, and
   * returns what it found: a sighting that fresh is not written again, and a stalled machine
   * can take longer than that between two queries.
   */
  async function whileFresh<T extends { sighting: Date }>(ms: number, attempt: () => Promise<T>): Promise<T> {
    for (let tries = 0; tries < 10; tries += 1) {
      const result = await attempt();
      if ((await msSince(result.sighting)) < ms) return result;
    }
    throw new Error(`no attempt in 10 ran within ${ms} ms of its sighting`);
  }

  test('a runner is registered once under its name, found by its token hash, and seen when found', async () => {
    const name = unique('gpu-box');
    const tokenHash = hash();
    const runner = await createRunner({
      db,
      name,
      owner: 'acme',
      repositories: ['acme/train'],
      labels: ['gpu', 'a100'],
      tokenHash,
    });
    expect(runner).toMatchObject({
      name,
      owner: 'acme',
      repositories: ['acme/train'],
      labels: ['gpu', 'a100'],
      tokenHash,
      acceptsForks: false,
      lastSeenAt: null,
    });
    expect(runner.id).toMatch(/^[0-9A-Z]{26}$/);

    const error = await createRunner({
      db,
      name,
      owner: 'other',
      repositories: [],
      labels: [],
      tokenHash: hash(),
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RunnerExistsError);
    expect((error as Error).message).toBe(
      `A runner named "${name}" exists already; choose another name, or remove it first (fluksio runner remove ${name})`,
    );

    const found = await findRunnerByTokenHash({ db, tokenHash });
    expect(found?.id).toBe(runner.id);
    expect(found?.lastSeenAt).toBeInstanceOf(Date);
    expect(await findRunnerByTokenHash({ db, tokenHash: hash() })).toBeNull();
  });

  test("a runner's requests mark it seen at most once a second: no commit per claim or heartbeat", async () => {
    const tokenHash = hash();
    const runner = await createRunner({
      db,
      name: unique('busy'),
      owner: 'acme',
      repositories: [],
      labels: [],
      tokenHash,
    });
    // Within the second, the row is read and not written again.
    const { sighting: seenAt, again } = await whileFresh(1000, async () => {
      const first = await findRunnerByTokenHash({ db, tokenHash });
      expect(first?.lastSeenAt).toBeInstanceOf(Date);
      return { sighting: first?.lastSeenAt as Date, again: await findRunnerByTokenHash({ db, tokenHash }) };
    });
    expect(again?.lastSeenAt).toEqual(seenAt);
    const [row] = await db.select().from(runners).where(eq(runners.id, runner.id));
    expect(row?.lastSeenAt).toEqual(seenAt);
    // A sighting older than a second is written again, by the database's clock.
    await db
      .update(runners)
      .set({ lastSeenAt: sql`now() - interval '5 seconds'` })
      .where(eq(runners.id, runner.id));
    const [backdated] = await db.select().from(runners).where(eq(runners.id, runner.id));
    const later = await findRunnerByTokenHash({ db, tokenHash });
    const [stored] = await db.select().from(runners).where(eq(runners.id, runner.id));
    expect(stored?.lastSeenAt?.getTime()).toBeGreaterThanOrEqual(
      (backdated?.lastSeenAt?.getTime() ?? 0) + 5000,
    );
    expect(later?.lastSeenAt?.getTime()).toBeGreaterThanOrEqual((seenAt as Date).getTime());
  });

  test('with a short online window, a sighting is written again sooner (a fortieth of the window)', async () => {
    const tokenHash = hash();
    const runner = await createRunner({
      db,
      name: unique('short'),
      owner: 'acme',
      repositories: [],
      labels: [],
      tokenHash,
    });
    await findRunnerByTokenHash({ db, tokenHash, onlineWindowMs: 4_000 });
    const seenAt = async () =>
      (await db.select().from(runners).where(eq(runners.id, runner.id)))[0]?.lastSeenAt?.getTime();
    // 150 ms old: within the default second, past a 4 s window's 100 ms.
    const { old, after } = await whileFresh(1000, async () => {
      await db
        .update(runners)
        .set({ lastSeenAt: sql`now() - interval '150 milliseconds'` })
        .where(eq(runners.id, runner.id));
      const before = (await seenAt()) as number;
      await findRunnerByTokenHash({ db, tokenHash });
      return { sighting: new Date(before), old: before, after: await seenAt() };
    });
    expect(after).toBe(old);
    await findRunnerByTokenHash({ db, tokenHash, onlineWindowMs: 4_000 });
    expect(await seenAt()).toBeGreaterThan(old);
  });

  test('runners list by name; a removed runner is gone and its token opens nothing', async () => {
    const [b, a] = [unique('b'), unique('a')];
    const tokenHash = hash();
    await createRunner({ db, name: b, owner: 'acme', repositories: [], labels: [], tokenHash });
    await createRunner({ db, name: a, owner: 'acme', repositories: [], labels: [], tokenHash: hash() });
    const names = (await listRunners({ db })).map((runner) => runner.name);
    expect(names.indexOf(a)).toBeLessThan(names.indexOf(b));
    expect(names.indexOf(a)).toBeGreaterThanOrEqual(0);

    expect(await removeRunner({ db, name: b })).toBe(true);
    expect(await removeRunner({ db, name: b })).toBe(false);
    expect(await findRunnerByTokenHash({ db, tokenHash })).toBeNull();
    expect((await listRunners({ db })).map((runner) => runner.name)).not.toContain(b);
  });

  test('an API token is found by its hash until revoked; its name is free again once revoked', async () => {
    const name = unique('ci');
    const tokenHash = hash();
    const token = await createApiToken({
      db,
      name,
      repositories: ['acme/train'],
      scope: 'submit',
      tokenHash,
    });
    expect(token).toMatchObject({ name, repositories: ['acme/train'], scope: 'submit', revokedAt: null });
    expect((await findApiTokenByHash({ db, tokenHash }))?.id).toBe(token.id);

    const duplicate = await createApiToken({
      db,
      name,
      repositories: ['acme/train'],
      scope: 'read',
      tokenHash: hash(),
    }).catch((caught: unknown) => caught);
    expect(duplicate).toBeInstanceOf(ApiTokenExistsError);

    expect(await revokeApiToken({ db, name })).toBe(true);
    expect(await revokeApiToken({ db, name })).toBe(false);
    expect(await findApiTokenByHash({ db, tokenHash })).toBeNull();

    const replacement = await createApiToken({
      db,
      name,
      repositories: ['acme/train'],
      scope: 'read',
      tokenHash: hash(),
    });
    expect(replacement.id).not.toBe(token.id);
  });

  test('an API token must name a repository', async () => {
    await expect(
      createApiToken({ db, name: unique('none'), repositories: [], scope: 'read', tokenHash: hash() }),
    ).rejects.toThrow('must name at least one repository');
  });
});
