import { expect, test } from 'vitest';
import { formatProblems } from '../../core/problem.js';
import { validatePipeline } from '../../core/pipeline/validate-pipeline.js';
import { Resources } from '../../schemas/resources.js';

test.each([
  {
    written: '32 gigs',
    message: '"32 gigs" is not a size: expected a number with a unit like 512MiB, 32GiB',
  },
  { written: '32GB', message: '"32GB" is not a size: expected a number with a unit like 512MiB, 32GiB' },
  {
    written: '0GiB',
    message: '"0GiB" is no memory at all: expected a number with a unit like 512MiB, 32GiB, more than zero',
  },
])('resources.memory $written is quoted in its error, with what is expected', ({ written, message }) => {
  const result = Resources.safeParse({ memory: written });
  expect(result.error?.issues.map((issue) => [issue.path.join('.'), issue.message])).toEqual([
    ['memory', message],
  ]);
});

test('a pipeline’s bad memory is named by where it is and what it says', () => {
  const { problems } = validatePipeline(
    'version: 1\nstages:\n  train:\n    cmd: python3 train.py\n    resources: {memory: 32 gigs}\n',
    { pipelineDir: '', exists: () => true },
  );
  expect(formatProblems(problems, 'fluksio.yml')).toBe(
    'fluksio.yml:5: stages.train.resources.memory: "32 gigs" is not a size: expected a number with a unit like 512MiB, 32GiB',
  );
});

test('a good memory still reads as whole MiB', () => {
  expect(Resources.parse({ memory: '1.5G' })).toEqual({ memory: 1536 });
});
