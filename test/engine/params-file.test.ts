import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runCli, runJson, statuses } from '../helpers/run-cli.js';

let repo: TestRepo | undefined;
afterEach(async () => {
  await repo?.cleanup();
  repo = undefined;
});

const pipeline = (file: string) => `version: 1
params:
  lr: { type: float, default: 0.1 }
  batch_size: { type: int, default: 32 }
  note: { type: string, default: "" }
params_file: ${file}
stages:
  show:
    cmd: python3 show.py
    deps: [show.py]
    params: [lr, batch_size]
    outs: [seen.json]
`;

/** Writes what the stage was given: its params file's text and path, and its FLUKSIO_PARAM_* variables. */
const SHOW = `import json, os
path = os.environ["FLUKSIO_PARAMS_FILE"]
variables = {k: v for k, v in os.environ.items() if k.startswith("FLUKSIO_PARAM_")}
json.dump({"path": path, "text": open(path).read(), "variables": variables}, open("seen.json", "w"))
`;

interface Seen {
  path: string;
  text: string;
  variables: Record<string, string>;
}

test("a stage reads its listed params from the run's params file and from FLUKSIO_PARAM_*; the file is keyed through the params and never left in the work tree", async () => {
  repo = await makeRepo({
    files: { 'fluksio.yml': pipeline('params.json'), 'show.py': SHOW, '.gitignore': 'seen.json\n' },
  });
  const first = await runJson(['lr=0.5'], { cwd: repo.dir });
  expect(first.code, first.stderr).toBe(0);
  const seen = JSON.parse(await readFile(join(repo.dir, 'seen.json'), 'utf8')) as Seen;
  expect(JSON.parse(seen.text)).toEqual({ lr: 0.5, batch_size: 32 });
  expect(seen.path.endsWith('/params.json')).toBe(true);
  expect(seen.variables).toEqual({ FLUKSIO_PARAM_LR: '0.5', FLUKSIO_PARAM_BATCH_SIZE: '32' });
  // Written in the stage's private folder, gone with it: nothing to commit or ignore.
  expect(existsSync(seen.path)).toBe(false);
  expect(await repo.git('status', '--porcelain')).toBe('');

  // A param the stage does not list is in neither, nor in its key; one it lists is.
  const unlisted = await runJson(['lr=0.5', 'note=other'], { cwd: repo.dir });
  expect(statuses(unlisted.report)).toEqual({ show: 'cached' });
  const listed = await runJson(['lr=0.5', 'batch_size=64'], { cwd: repo.dir });
  expect(statuses(listed.report)).toEqual({ show: 'ran' });
  expect(listed.report.stages[0]?.reasons).toEqual(['batch_size 32 → 64']);
});

test('params.yaml is written as YAML', async () => {
  repo = await makeRepo({
    files: { 'fluksio.yml': pipeline('params.yaml'), 'show.py': SHOW, '.gitignore': 'seen.json\n' },
  });
  const result = await runJson(['batch_size=8'], { cwd: repo.dir });
  expect(result.code, result.stderr).toBe(0);
  const seen = JSON.parse(await readFile(join(repo.dir, 'seen.json'), 'utf8')) as Seen;
  expect(seen.text).toBe('lr: 0.1\nbatch_size: 8\n');
});

test('the params file written as another format is another key: the stage re-runs and says why', async () => {
  repo = await makeRepo({
    files: { 'fluksio.yml': pipeline('params.json'), 'show.py': SHOW, '.gitignore': 'seen.json\n' },
  });
  expect((await runJson([], { cwd: repo.dir })).code).toBe(0);
  await repo.write('fluksio.yml', pipeline('params.yaml'));
  await repo.git('commit', '-qam', 'params as YAML');
  const yaml = await runJson([], { cwd: repo.dir });
  expect(statuses(yaml.report)).toEqual({ show: 'ran' });
  expect(yaml.report.stages[0]?.reasons).toContain('params file params.json → params.yaml');
  const seen = JSON.parse(await readFile(join(repo.dir, 'seen.json'), 'utf8')) as Seen;
  expect(seen.text).toBe('lr: 0.1\nbatch_size: 32\n');
});

test('a params_file that is not a .yaml, .yml or .json file name is refused, naming the field', async () => {
  repo = await makeRepo({ files: { 'fluksio.yml': pipeline('conf/params.toml'), 'show.py': SHOW } });
  const result = await runCli(['run'], { cwd: repo.dir });
  expect(result.code).toBe(2);
  expect(result.stderr).toMatch(/params_file: expected a file name ending in \.yaml, \.yml or \.json/);
  expect(existsSync(join(repo.dir, '.fluksio'))).toBe(false);
});
