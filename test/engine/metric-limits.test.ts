import { afterEach, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runCli, runJson, stageOf } from '../helpers/run-cli.js';

let repo: TestRepo;
afterEach(async () => {
  await repo?.cleanup();
});

test('a stage printing a metric per loop turn keeps the first 1,000, says so on the stage, and its final values stay true', async () => {
  repo = await makeRepo({
    files: {
      'fluksio.yml': `version: 1
stages:
  sprawl:
    cmd: >-
      python3 -c "[print(f'::metric name=x{i}::{i}') for i in range(1200)];
      print('::metric name=x0::-1')"
`,
    },
  });
  const { code, report } = await runJson([], { cwd: repo.dir });
  expect(code).toBe(0);
  expect(stageOf(report, 'sprawl').status).toBe('ran');
  const metrics = report.metrics as Record<string, number>;
  expect(Object.keys(metrics)).toHaveLength(1000);
  expect(metrics.x0).toBe(-1);
  expect(metrics.x999).toBe(999);
  expect(metrics.x1000).toBeUndefined();

  const shown = await runCli(['show', report.run.id, '--log', 'sprawl', '--json'], { cwd: repo.dir });
  expect(shown.code).toBe(0);
  const { log } = JSON.parse(shown.stdout) as { log: string };
  expect(log).toContain(
    'fluksio: this stage reported 1000 metrics, the most one stage keeps: points of other metrics are ignored, from "x1000" on',
  );
  expect(log).toContain(
    'fluksio: ignored 200 points of 200 metrics past the limit of 1000 metrics per stage',
  );
});
