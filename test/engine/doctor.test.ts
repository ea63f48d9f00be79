import { existsSync } from 'node:fs';
import { readdir, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { TestRepo } from '../helpers/make-repo.js';
import { makeMlProject } from '../helpers/ml-project.js';
import { runCli, runJson, statuses } from '../helpers/run-cli.js';

let repo: TestRepo;
afterEach(async () => {
  await repo?.cleanup();
});

const env = { DEVICE: 'cpu' };
const run = (args: string[] = []) => runJson(args, { cwd: repo.dir, env });
const cli = (args: string[]) => runCli(args, { cwd: repo.dir, env });
const store = (...parts: string[]) => join(repo.dir, '.fluksio', ...parts);

interface DoctorJson {
  healthy: boolean;
  journal: { runs: number; damaged: string[] };
  database: { state: string; problem: string | null };
  index: { cacheEntries: number; behind: number };
  repair: { movedDatabaseTo: string | null; runsApplied: number } | null;
}

async function doctor(...args: string[]): Promise<{ code: number; report: DoctorJson }> {
  const result = await cli(['doctor', '--json', ...args]);
  return { code: result.code, report: JSON.parse(result.stdout) as DoctorJson };
}

/** Two runs recorded, and the database made by a command that reads history. */
async function projectWithHistory() {
  repo = await makeMlProject();
  const first = await run();
  const second = await run(['lr=0.2']);
  expect([first.code, second.code]).toEqual([0, 0]);
  expect((await cli(['runs'])).code).toBe(0);
  return { first, second };
}

describe('a damaged local database', () => {
  test('is said with the way out, and doctor --repair rebuilds it from the journals, keeping the cache', async () => {
    const { first, second } = await projectWithHistory();
    // Cut short as a full disk or a killed copy would leave it.
    await truncate(store('db', 'global', 'pg_control'), 100);

    const listed = await cli(['runs']);
    expect(listed.code).toBe(1);
    expect(listed.stderr).toContain(`The local database ${store('db')} is damaged`);
    expect(listed.stderr).toContain('fluksio doctor --repair');

    const checked = await doctor();
    expect(checked.code).toBe(1);
    expect(checked.report).toMatchObject({
      healthy: false,
      database: { state: 'damaged' },
      journal: { runs: 2 },
    });

    const repaired = await doctor('--repair');
    expect(repaired.code).toBe(0);
    expect(repaired.report).toMatchObject({
      healthy: true,
      database: { state: 'ok' },
      repair: { runsApplied: 2 },
    });
    const aside = repaired.report.repair?.movedDatabaseTo ?? '';
    expect(aside).toMatch(/^db\.damaged-/);
    expect(existsSync(store(aside, 'global', 'pg_control'))).toBe(true);

    const after = await cli(['runs', '--json']);
    expect(after.code, after.stderr).toBe(0);
    expect((JSON.parse(after.stdout) as { id: string }[]).map((each) => each.id)).toEqual([
      second.report.run.id,
      first.report.run.id,
    ]);
    const cached = await run();
    expect(statuses(cached.report)).toEqual({ prepare: 'cached', train: 'cached', evaluate: 'cached' });
    for (const stage of cached.report.stages) expect(stage.cachedFrom).toBe(first.report.run.id);
  });

  test('a table cut short is found by doctor and repaired the same way', async () => {
    const { first } = await projectWithHistory();
    const relations = await readdir(store('db', 'base', '5'));
    // Every relation file of the database cut to half a page: whatever the runs table's file is.
    for (const name of relations.filter((each) => /^\d+$/.test(each) && Number(each) >= 16384)) {
      await truncate(store('db', 'base', '5', name), 4096);
    }
    const checked = await doctor();
    expect(checked.report).toMatchObject({ healthy: false, database: { state: 'damaged' } });

    expect((await doctor('--repair')).report).toMatchObject({ healthy: true, database: { state: 'ok' } });
    const shown = await cli(['show', first.report.run.id, '--json']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(statuses((await run()).report)).toEqual({
      prepare: 'cached',
      train: 'cached',
      evaluate: 'cached',
    });
  });
});

describe('a damaged index', () => {
  test('costs cache hits, never a stale one, and doctor --repair rebuilds it from the journals', async () => {
    const { second } = await projectWithHistory();
    await rm(store('index', 'previous'), { recursive: true });
    const entries = await readdir(store('index', 'cache'));
    // One entry torn, the others gone.
    await writeFile(store('index', 'cache', entries[0] ?? 'none'), '{"entry": {"key"');
    for (const name of entries.slice(1)) await rm(store('index', 'cache', name));

    const missed = await run();
    expect(missed.code).toBe(0);
    expect(statuses(missed.report)).toEqual({ prepare: 'ran', train: 'ran', evaluate: 'ran' });
    await rm(store('index'), { recursive: true });

    const checked = await doctor();
    expect(checked.report).toMatchObject({ healthy: false, database: { state: 'ok' } });
    expect(checked.report.index.behind).toBeGreaterThan(0);
    expect((await doctor('--repair')).report).toMatchObject({ healthy: true, index: { behind: 0 } });

    const cached = await run(['lr=0.2']);
    expect(statuses(cached.report)).toEqual({ prepare: 'cached', train: 'cached', evaluate: 'cached' });
    // Rebuilt as the runs left it: train's entry for these params is the second run's.
    expect(cached.report.stages.find((stage) => stage.name === 'train')?.cachedFrom).toBe(
      second.report.run.id,
    );
    expect(cached.report.baseline?.id).toBe(second.report.run.id);
  });
});

describe('fluksio doctor', () => {
  test('says what it does in --help, and that there is nothing to check before a first run', async () => {
    repo = await makeMlProject();
    const help = await cli(['doctor', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--repair');
    expect(help.stdout).toContain('--json');
    const none = await cli(['doctor']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('No local store for fluksio.yml yet');
  });
});
