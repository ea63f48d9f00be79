import { expect, test } from 'vitest';
import { translateDvc } from '../../core/dvc/translate-dvc.js';

// JavaScript numbers hold whole numbers exactly only up to 2^53; Python's ints have no
// bound. A seed of 9007199254740993 would reach the command as …992 and share its key.
const paramsYaml = 'seed: 9007199254740993\nseeds: [1, 18446744073709551615]\nsmall: 9007199254740991\n';

test.each([
  {
    rule: 'a listed param',
    stage: 'cmd: python3 t.py\n    params: [seed]',
    problem: {
      path: 'stages.s.params[0]',
      message:
        'seed in params.yaml is 9007199254740993, a whole number past 2^53 that fluksio cannot carry exactly; quote it ("9007199254740993") to make it text',
    },
  },
  {
    rule: 'a list param holding one',
    stage: 'cmd: python3 t.py\n    params: [seeds]',
    problem: {
      path: 'stages.s.params[0]',
      message:
        'seeds[1] in params.yaml is 18446744073709551615, a whole number past 2^53 that fluksio cannot carry exactly; quote it ("18446744073709551615") to make it text',
    },
  },
  {
    rule: 'a param in cmd',
    stage: 'cmd: python3 t.py ${seed}',
    problem: {
      path: 'stages.s.cmd',
      message:
        'seed in params.yaml is 9007199254740993, a whole number past 2^53 that fluksio cannot carry exactly; quote it ("9007199254740993") to make it text',
    },
  },
])('a whole number JavaScript cannot hold exactly is refused in $rule', ({ stage, problem }) => {
  const { pipeline, problems } = translateDvc({
    dvcYaml: `stages:\n  s:\n    ${stage}\n`,
    pipelineDir: '',
    readFile: (path) => (path === 'params.yaml' ? paramsYaml : undefined),
  });
  expect(pipeline).toBeNull();
  expect(problems).toEqual([problem]);
});

test('a whole number up to 2^53, or one no stage uses, is taken as it is', () => {
  const { pipeline, problems } = translateDvc({
    dvcYaml: 'stages:\n  s:\n    cmd: python3 t.py ${small}\n    params: [small]\n',
    pipelineDir: '',
    readFile: (path) => (path === 'params.yaml' ? paramsYaml : undefined),
  });
  expect(problems).toEqual([]);
  expect(pipeline?.params).toEqual({ small: { type: 'int', default: 9007199254740991 } });
});
