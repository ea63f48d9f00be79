import { afterEach, expect, test } from 'vitest';
import { runFluksio } from '../helpers/fluksio-process.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { statuses, type RunJson } from '../helpers/run-cli.js';

const repos: TestRepo[] = [];
afterEach(async () => {
  for (const repo of repos.splice(0)) await repo.cleanup();
});

const REGISTRY = 'https://github.com/iterative/dataset-registry';

/** data/data.xml.dvc as `dvc import https://github.com/iterative/dataset-registry get-started/data.xml -o data/data.xml` writes it. */
const IMPORTED = `md5: 6e5d4d55b2c1e3bc0f3a5b7c9d1e2f30
frozen: true
deps:
- path: get-started/data.xml
  repo:
    url: ${REGISTRY}
    rev_lock: f31f5c4cdae787b4bdeb97a717687d44667d9e62
outs:
- md5: a304afb96060aad90176268345e10355
  size: 14445097
  hash: md5
  path: data.xml
`;

/** The same data as `dvc import-url https://data.dvc.org/get-started/data.xml data/data.xml` writes it. */
const IMPORTED_URL = `md5: 0e21a3f1f2b1c3d4e5f60718293a4b5c
frozen: true
deps:
- etag: '"f432e270cd634c51296ecd2bc2f5e752-5"'
  size: 14445097
  path: https://data.dvc.org/get-started/data.xml
outs:
- md5: a304afb96060aad90176268345e10355
  size: 14445097
  hash: md5
  path: data.xml
`;

// prepare and featurize need the imported data; train is frozen and its model was never
// fetched, so report cannot run; words runs on what the repository holds.
const DVC_YAML = `stages:
  prepare:
    cmd: mkdir -p data/prepared && wc -l < data/data.xml > data/prepared/lines.txt
    deps: [data/data.xml]
    outs: [data/prepared]
  featurize:
    cmd: mkdir -p data/features && cat data/prepared/lines.txt > data/features/n.txt
    deps: [data/prepared]
    outs: [data/features]
  train:
    cmd: echo model > model.pkl
    deps: [data/features]
    outs: [model.pkl]
    frozen: true
  report:
    cmd: wc -c < model.pkl > report.txt
    deps: [model.pkl]
    outs: [report.txt]
  words:
    cmd: wc -w < notes.txt > words.txt
    deps: [notes.txt]
    outs: [words.txt]
`;

async function project(dvcFile: string): Promise<TestRepo> {
  const repo = await makeRepo({
    files: {
      'dvc.yaml': DVC_YAML,
      'notes.txt': 'three little words\n',
      'data/data.xml.dvc': dvcFile,
      // As DVC leaves it: the data itself is ignored by git.
      'data/.gitignore': '/data.xml\n/prepared\n/features\n',
      '.gitignore': '/model.pkl\n/report.txt\n/words.txt\n',
    },
  });
  repos.push(repo);
  return repo;
}

async function runJson(args: string[], cwd: string): Promise<{ report: RunJson; stderr: string }> {
  const result = await runFluksio(['run', '--json', ...args], { cwd });
  expect(result.code, result.stderr).toBe(0);
  return { report: JSON.parse(result.stdout) as RunJson, stderr: result.stderr };
}

const PREPARE_HELD = `not honoured: stage prepare: cannot run: data/data.xml comes from \`dvc import\` of ${REGISTRY} (data/data.xml.dvc), which fluksio cannot fetch; fetch it yourself (dvc pull / dvc import) or commit it`;
const REPORT_HELD =
  'not honoured: stage report: cannot run: model.pkl is an out of stage train, which is frozen (so it does not run) and absent from the workspace; fetch it yourself (dvc pull) or unfreeze train (dvc unfreeze train)';

test('data from dvc import that is not in the workspace is named with the stages that need it, and the rest runs', async () => {
  const repo = await project(IMPORTED);

  const status = await runFluksio(['status', '--json'], { cwd: repo.dir });
  expect(status.code, status.stderr).toBe(0);
  const lines = status.stderr.split('\n');
  expect(lines).toContain(PREPARE_HELD);
  expect(lines).toContain(
    `not honoured: stage featurize: cannot run: it needs data/prepared from stage prepare, which cannot run: ${PREPARE_HELD.slice(PREPARE_HELD.indexOf('data/data.xml comes'))}`,
  );
  expect(lines).toContain(REPORT_HELD);
  expect(status.stderr).not.toContain('neither in the repository');
  expect((JSON.parse(status.stdout) as { stages: { name: string }[] }).stages.map((s) => s.name)).toEqual([
    'words',
  ]);

  const ran = await runJson([], repo.dir);
  expect(statuses(ran.report)).toEqual({ words: 'ran' });
  expect(ran.stderr.split('\n')).toEqual(expect.arrayContaining([PREPARE_HELD, REPORT_HELD]));
});

test('data from dvc import-url is named with its URL', async () => {
  const repo = await project(IMPORTED_URL);
  const status = await runFluksio(['status'], { cwd: repo.dir });
  expect(status.code, status.stderr).toBe(0);
  expect(status.stderr).toContain(
    'not honoured: stage prepare: cannot run: data/data.xml comes from `dvc import-url` of https://data.dvc.org/get-started/data.xml (data/data.xml.dvc), which fluksio cannot fetch; fetch it yourself (dvc pull / dvc import-url) or commit it',
  );
  expect(status.stdout).toMatch(/^words +run /m);
  expect(status.stdout).not.toMatch(/^prepare /m);
});

test('imported data that is in the workspace is a dep like any file, hashed as usual, with a note', async () => {
  const repo = await project(IMPORTED);
  await repo.write('data/data.xml', '<row/>\n<row/>\n');
  // The frozen stage's out is in the workspace too (as dvc pull leaves it): report reads it.
  await repo.write('model.pkl', 'model\n');

  const first = await runJson([], repo.dir);
  expect(statuses(first.report)).toEqual({ prepare: 'ran', featurize: 'ran', report: 'ran', words: 'ran' });
  expect(first.stderr).toContain(
    `not honoured: data/data.xml comes from \`dvc import\` of ${REGISTRY} (data/data.xml.dvc): the copy in the workspace is used, hashed as any dep of prepare; fluksio neither fetches nor updates it`,
  );
  expect(first.stderr).not.toContain('cannot run');

  await repo.write('data/data.xml', '<row/>\n<row/>\n<row/>\n');
  const second = await runJson([], repo.dir);
  expect(statuses(second.report)).toEqual({
    prepare: 'ran',
    featurize: 'ran',
    report: 'cached',
    words: 'cached',
  });
  expect(second.report.stages.find((stage) => stage.name === 'prepare')?.reasons).toEqual([
    'data/data.xml changed',
  ]);
});
