import { join } from 'node:path';
import { expect, test } from 'vitest';
import { loadProjectPipeline } from '../../core/dvc/load-project-pipeline.js';
import { loadProjectPipelineAsync, MAX_PROJECT_FILES } from '../../core/dvc/load-project-pipeline-async.js';
import { committedFiles } from '../helpers/committed-files.js';

const EXAMPLE = committedFiles(join(import.meta.dirname, '../../examples/dvc-get-started'));

/** An asynchronous reader of `files` that counts what it was asked for. */
function reader(files: Record<string, string>) {
  const asked: string[] = [];
  return {
    asked,
    readFile: async (path: string) => {
      asked.push(path);
      await new Promise((resolve) => setImmediate(resolve));
      return files[path];
    },
  };
}

const VARS_DVC = [
  'vars:',
  '  - config.yaml',
  '  - sizes.yaml:small',
  'stages:',
  '  train:',
  '    cmd: python3 train.py ${data_dir} ${small} ${train.lr}',
  '    params:',
  '      - train.lr',
  '      - custom.json:',
  '          - seed',
  '',
].join('\n');
const VARS_FILES = {
  'params.yaml': 'train:\n  lr: 0.1\n',
  'config.yaml': 'data_dir: data\n',
  'sizes.yaml': 'small: 8\nlarge: 64\n',
  'custom.json': '{"seed": 3}',
};

test.each([
  ['the get-started project', EXAMPLE['dvc.yaml'] ?? '', EXAMPLE, ['params.yaml']],
  ['vars files and another params file', VARS_DVC, VARS_FILES, Object.keys(VARS_FILES)],
  [
    'a vars file that is not there',
    VARS_DVC,
    { ...VARS_FILES, 'sizes.yaml': undefined },
    // ${small} cannot be resolved, so the stage's params (custom.json) are never looked at.
    ['params.yaml', 'config.yaml', 'sizes.yaml'],
  ],
])(
  'with %s: the translation the synchronous loader makes with every file at hand, each file read once',
  async (_name, text, files, read) => {
    const all = files as Record<string, string>;
    const { asked, readFile } = reader(all);
    const context = { file: 'dvc.yaml', text, pipelineDir: '' };
    const loaded = await loadProjectPipelineAsync({ ...context, readFile });
    expect(loaded).toEqual(loadProjectPipeline({ ...context, readFile: (path) => all[path] }));
    expect(asked.sort()).toEqual([...read].sort());
  },
);

test('a fluksio.yml reads no other file', async () => {
  const { asked, readFile } = reader({});
  const loaded = await loadProjectPipelineAsync({
    file: 'fluksio.yml',
    text: 'version: 1\nstages:\n  train:\n    cmd: echo hi\n',
    pipelineDir: '',
    readFile,
  });
  expect(loaded.problems).toEqual([]);
  expect(Object.keys(loaded.pipeline?.stages ?? {})).toEqual(['train']);
  expect(asked).toEqual([]);
});

test(`a dvc.yaml naming more than ${MAX_PROJECT_FILES} files is a problem, and no more than that are read`, async () => {
  const names = Array.from({ length: MAX_PROJECT_FILES + 8 }, (_, index) => `vars-${index}.yaml`);
  const files = Object.fromEntries(names.map((name, index) => [name, `v${index}: ${index}\n`]));
  const { asked, readFile } = reader(files);
  const text = `vars:\n${names.map((name) => `  - ${name}\n`).join('')}stages:\n  a:\n    cmd: echo \${v0}\n`;
  const loaded = await loadProjectPipelineAsync({ file: 'dvc.yaml', text, pipelineDir: '', readFile });
  expect(loaded.pipeline).toBeNull();
  expect(loaded.problems).toEqual([
    {
      path: '',
      message: `reads more than ${MAX_PROJECT_FILES} files beside dvc.yaml (params and vars files); at most ${MAX_PROJECT_FILES} are read`,
    },
  ]);
  expect(asked.length).toBeLessThanOrEqual(MAX_PROJECT_FILES);
});
