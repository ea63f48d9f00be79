import { expect, test } from 'vitest';
import { projectFileProblem } from '../../core/dvc/project-file-problem.js';
import { translateDvc } from '../../core/dvc/translate-dvc.js';

test.each([
  // name, dvc.yaml's folder in the repository, refused because
  ['params.yaml', '', null],
  ['conf/train.yaml', '', null],
  ['../params.yaml', 'sub', null],
  ['./a/../b.yaml', '', null],
  ['../params.yaml', '', /outside the repository/],
  ['../../x.yaml', 'sub', /outside the repository/],
  ['a/../../x.yaml', '', /outside the repository/],
  ['..\\x.yaml', '', /outside the repository/],
  ['/etc/passwd', '', /absolute path/],
  ['C:/x.yaml', '', /absolute path/],
  ['', '', /expected a file name/],
])('%j from dvc.yaml in %j', (name, pipelineDir, refused) => {
  const problem = projectFileProblem(name, pipelineDir);
  if (refused === null) expect(problem).toBeNull();
  else expect(problem).toMatch(refused);
});

test('a dvc.yaml naming a params or vars file outside the repository is refused at that field, and the file is never read', () => {
  const asked: string[] = [];
  const { pipeline, problems } = translateDvc({
    pipelineDir: '',
    exists: () => true,
    dvcYaml: [
      'vars:',
      '  - ../secrets.yaml',
      'stages:',
      '  train:',
      '    cmd: python train.py',
      '    params:',
      '      - /etc/fluksio/runner.yaml:',
      '          - token',
      '',
    ].join('\n'),
    readFile: (path) => {
      asked.push(path);
      return path === 'params.yaml' ? 'lr: 0.1\n' : 'token: 1\n';
    },
  });
  expect(pipeline).toBeNull();
  expect(problems).toEqual([
    { path: 'vars[0]', message: expect.stringMatching(/^\.\.\/secrets\.yaml is outside the repository/) },
    {
      path: 'stages.train.params[0]',
      message: expect.stringMatching(/^\/etc\/fluksio\/runner\.yaml is an absolute path/),
    },
  ]);
  expect(asked).toEqual(['params.yaml']);
});
