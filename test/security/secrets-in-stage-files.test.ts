import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { FakeControlPlane } from '../runner-daemon/helpers/fake-control-plane.js';
import { makeClaim } from '../runner-daemon/helpers/make-claim.js';
import { startRunner, type RunnerProcess } from '../runner-daemon/helpers/runner-process.js';

let plane: FakeControlPlane;
let repo: TestRepo;
let workDir: string;
let runner: RunnerProcess | null = null;
beforeEach(async () => {
  plane = new FakeControlPlane();
  await plane.start();
  workDir = await mkdtemp(path.join(tmpdir(), 'fluksio-runner-'));
});
afterEach(async () => {
  await runner?.stop('SIGKILL');
  runner = null;
  await plane.stop();
  await repo?.cleanup();
  await rm(workDir, { recursive: true, force: true });
});

const SECRET = 'hf_Zq8sekretVy3kP0wLm2x';

/**
 * A trusted run's stages write the runner's secret into the files the runner reads back
 * after them: a metrics file (as a metric's name, as a declared metric's value, as text
 * that is not JSON, at its start or further in) and a plot file (as a column's name). What the runner makes of those
 * files reaches the run's record and its check run: the secret must not.
 */
const PIPELINE = `version: 1
metrics:
  acc: { goal: max }
stages:
  named:
    cmd: |-
      printf '{"%s": 1, "loss": 0.5}' "$HF_TOKEN" > named.json
    metrics: [named.json]
  declared:
    cmd: |-
      printf '{"acc": "%s"}' "$HF_TOKEN" > declared.json
    metrics: [declared.json]
  broken:
    cmd: |-
      printf '%s' "$HF_TOKEN" > broken.json
    metrics: [broken.json]
  cut:
    cmd: |-
      printf '{"loss": 0.5, "note": %s}' "$HF_TOKEN" > cut.json
    metrics: [cut.json]
  plotted:
    cmd: |-
      printf 'step,%s\\n0,1\\n1,2\\n' "$HF_TOKEN" > curve.csv
    outs: [curve.csv]
    plots:
      - path: curve.csv
`;

test("a runner's secret written into a stage's metrics or plot file reaches no event, finish or log", async () => {
  repo = await makeRepo({ files: { 'fluksio.yml': PIPELINE, '.gitignore': '*.json\n*.csv\n' } });
  const commit = (await repo.git('rev-parse', 'HEAD')).trim();
  const envFile = path.join(workDir, 'secrets.env');
  await writeFile(envFile, `HF_TOKEN=${SECRET}\n`);
  runner = startRunner({ workDir, envFile }, { FLUKSIO_URL: plane.url, FLUKSIO_RUNNER_TOKEN: plane.token });
  const trusted = plane.enqueue(makeClaim({ repoDir: repo.dir, commit }));
  const run = await plane.waitFor(trusted.claim.run.id, (candidate) => candidate.finish !== null);
  // The stages ran and the runner read their files: the secret was there to be leaked.
  expect(run.finish?.metrics).toMatchObject({ loss: 0.5 });
  const events = JSON.stringify(plane.eventsOf(trusted.claim.run.id));
  expect(events).toContain('"name":"broken"');
  expect(events).toContain('"name":"cut"');
  expect(events).toContain('"name":"curve/***"');
  expect(run.finish?.metrics).toEqual({ '***': 1, loss: 0.5 });
  // Where the file is broken is still said, from the excerpt left out.
  expect(events).toContain(
    "Metrics file cut.json is not valid JSON: Unexpected token 'h' (line 1, column 23)",
  );
  const everything = events + JSON.stringify(run.finish) + (runner.output() ?? '');
  // Not even a piece of it: a parser's excerpt may cut it.
  for (let at = 0; at + 8 <= SECRET.length; at++) expect(everything).not.toContain(SECRET.slice(at, at + 8));
});
