import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import type { RemoteRunReport } from '../../schemas/protocol/remote-run-report.js';
import { committedFiles } from '../helpers/committed-files.js';
import { spawnFluksio } from '../helpers/fluksio-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { ControlPlaneWorld } from './control-plane-fixture.js';

const EXAMPLE = join(import.meta.dirname, '../../examples/dvc-get-started');

let database: TestDatabase;
let world: ControlPlaneWorld;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(() => {
  world = new ControlPlaneWorld(database.db, database.url);
});
afterEach(async () => {
  await world.close();
});

/** The report `submit --wait --json` printed after its progress lines. */
function reportOf(output: string): RemoteRunReport {
  return JSON.parse(output.slice(output.indexOf('{'))) as RemoteRunReport;
}

function statuses(report: RemoteRunReport): Record<string, string> {
  return Object.fromEntries(report.stages.map((stage) => [stage.name, stage.status]));
}

/**
 * The DVC acceptance against the control plane: examples/dvc-get-started committed
 * unchanged (no fluksio.yml) is submitted from its clone; a real runner loads the dvc.yaml
 * the run names at the commit. A DVC-named param is typed from params.yaml before anything
 * is queued, re-runs what reads it on the runner while prepare comes from the cache, and
 * `fluksio pull` writes the outputs dvc.yaml declares. Seven python stages on the runner
 * take most of a minute here, so the test has a longer limit than the default.
 */
test('fluksio submit of a DVC project: the runner runs dvc.yaml, featurize.max_features=400 re-runs featurize, train and evaluate and takes prepare from the cache', async () => {
  await world.start();
  const project = await world.repo(committedFiles(EXAMPLE));
  await project.repo.git('remote', 'add', 'origin', project.repo.dir);
  await project.repo.git('fetch', '-q', 'origin');
  await world.allow([project.repository]);
  await world.runner('dvc-box');
  const remote = { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: world.apiToken };

  const untyped = spawnFluksio(['submit', 'featurize.max_features=many'], {
    cwd: project.repo.dir,
    env: remote,
  });
  expect(await untyped.exited).toBe(2);
  expect(untyped.output()).toContain(`Parameter 'featurize.max_features': "many" is not an int`);

  const first = spawnFluksio(['submit', '--wait', '--json'], { cwd: project.repo.dir, env: remote });
  expect(await first.exited, first.output()).toBe(0);
  const baseline = reportOf(first.output());
  expect(baseline).toMatchObject({
    run: {
      status: 'succeeded',
      commit: project.commit,
      pipelinePath: 'dvc.yaml',
      params: { 'featurize.max_features': 100, 'prepare.split': 0.2, 'train.n_est': 50 },
    },
    runner: 'dvc-box',
  });
  expect(statuses(baseline)).toEqual({ prepare: 'ran', featurize: 'ran', train: 'ran', evaluate: 'ran' });
  expect(Object.keys(baseline.metrics).sort()).toEqual(['avg_prec', 'roc_auc']);

  const changed = spawnFluksio(['submit', 'featurize.max_features=400', '--wait', '--json'], {
    cwd: project.repo.dir,
    env: remote,
  });
  expect(await changed.exited, changed.output()).toBe(0);
  const report = reportOf(changed.output());
  expect(report.run).toMatchObject({
    status: 'succeeded',
    pipelinePath: 'dvc.yaml',
    params: { 'featurize.max_features': 400, 'featurize.ngrams': 1 },
  });
  expect(statuses(report)).toEqual({ prepare: 'cached', featurize: 'ran', train: 'ran', evaluate: 'ran' });

  const pull = spawnFluksio(['pull', report.run.id, '--to', 'pulled'], {
    cwd: project.repo.dir,
    env: remote,
  });
  expect(await pull.exited, pull.output()).toBe(0);
  const metrics = JSON.parse(
    await readFile(join(project.repo.dir, 'pulled', 'eval', 'metrics.json'), 'utf8'),
  ) as Record<string, number>;
  expect(metrics).toEqual(report.metrics);
  expect(existsSync(join(project.repo.dir, 'pulled', 'model.json'))).toBe(true);
  // Nothing ran here, and DVC's own state is neither needed nor made.
  expect(existsSync(join(project.repo.dir, '.fluksio'))).toBe(false);
  expect(existsSync(join(project.repo.dir, '.dvc'))).toBe(false);
}, 240_000);
