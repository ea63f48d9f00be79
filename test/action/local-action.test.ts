import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { EXPERIMENT_FILES, REPOSITORY } from './helpers/experiment.js';

const exec = promisify(execFile);

/** This repository, where action.yml and the committed dist/ are. */
const ACTION_DIR = fileURLToPath(new URL('../..', import.meta.url));
/** GitHub's own local runner for JavaScript actions (a devDependency). */
const LOCAL_ACTION = join(ACTION_DIR, 'node_modules/@github/local-action/bin/local-action.js');

let repo: TestRepo;
let files: string;
afterEach(async () => {
  await repo?.cleanup();
  if (files) await rm(files, { recursive: true, force: true });
});

/**
 * `local-action run` imports a step's logic module and calls its exported `run()`, as GitHub's
 * toolkit template expects: a bundle that also ran itself on import would run the pipeline twice,
 * and a post bundle without `run()` would not load.
 */
test('@github/local-action runs the committed main and post steps once each', async () => {
  repo = await makeRepo({ files: EXPERIMENT_FILES });
  files = await mkdtemp(join(tmpdir(), 'fluksio-local-action-'));
  const outputFile = join(files, 'output');
  await writeFile(outputFile, '');
  const dotenv = join(files, '.env');
  const sha = (await repo.git('rev-parse', 'HEAD')).trim();
  await writeFile(
    dotenv,
    [
      'INPUT_PARAMS=lr=0.25',
      'INPUT_PIPELINE=fluksio.yml',
      'INPUT_NO-CACHE=false',
      'INPUT_WAIT=true',
      'INPUT_CHECK-NAME=fluksio',
      'INPUT_GITHUB-TOKEN=',
      'INPUT_SERVER=',
      'INPUT_SERVER-TOKEN=',
      `GITHUB_WORKSPACE=${repo.dir}`,
      `GITHUB_REPOSITORY=${REPOSITORY}`,
      'GITHUB_EVENT_NAME=push',
      `GITHUB_SHA=${sha}`,
      `GITHUB_OUTPUT=${outputFile}`,
      `RUNNER_TEMP=${files}`,
      'NO_COLOR=1',
      '',
    ].join('\n'),
  );

  const { stdout } = await exec(
    process.execPath,
    [LOCAL_ACTION, 'run', ACTION_DIR, 'dist/main.mjs', dotenv, '--post', 'dist/post.mjs'],
    { cwd: ACTION_DIR, env: { ...process.env, NO_COLOR: '1' }, maxBuffer: 64 << 20 },
  );

  const runIds = new Set(
    [...stdout.matchAll(/\bRun ([0-9A-HJKMNP-TV-Z]{26}) succeeded\b/g)].map((m) => m[1]),
  );
  expect(runIds.size, stdout).toBe(1);
  const outputs = await readFile(outputFile, 'utf8');
  for (const name of ['run-id', 'status', 'metrics', 'summary', 'runs']) {
    expect(outputs.match(new RegExp(`^${name}<<`, 'gm')), `${name} in\n${outputs}`).toHaveLength(1);
  }
  expect(outputs).toContain(`run-id<<`);
  expect(outputs).toContain([...runIds][0]);
  expect(stdout).toContain('Running Post Step');
  expect(stdout).not.toMatch(/is not a function|Error:/);
}, 240_000);
