import { expect, test } from 'vitest';
import { loadProjectPipelineAsync } from '../../core/dvc/load-project-pipeline-async.js';

/*
 * The GitHub App reads a pull request's pipeline file (`readPipelineAt`, through this very
 * loader) on every push to it, a fork's included, before anything is approved: a few bytes
 * of it must never cost the control plane more than a few bytes' work.
 */

/** The pipeline the App would read from `file` holding `text`, with no other file beside it. */
function load(file: 'fluksio.yml' | 'dvc.yaml', text: string) {
  return loadProjectPipelineAsync({ file, text, pipelineDir: '', readFile: async () => undefined });
}

/** A `dvc.yaml` whose one stage is a matrix of `lists` lists of `size` values each. */
function matrixOf(lists: number, size: number): string {
  const values = `[${Array.from({ length: size }, (_, index) => index).join(', ')}]`;
  const keys = Array.from({ length: lists }, (_, index) => `      k${index}: ${values}`).join('\n');
  return `stages:\n  s:\n    matrix:\n${keys}\n    cmd: echo \${item.k0}\n`;
}

test("a dvc.yaml matrix of a hundred million stages (eight lists of ten, 300 bytes) is refused, naming the count, before one is made", async () => {
  const { pipeline, problems } = await load('dvc.yaml', matrixOf(8, 10));
  expect(pipeline).toBeNull();
  expect(problems).toContainEqual(
    expect.objectContaining({
      path: 'stages.s',
      message: 'matrix makes 100,000,000 stages; a dvc.yaml makes at most 1,000 in all',
    }),
  );
});

test('a dvc.yaml makes at most 1,000 stages in all, plain, foreach and matrix ones together', async () => {
  expect((await load('dvc.yaml', matrixOf(2, 40))).problems).toContainEqual(
    expect.objectContaining({ path: 'stages.s', message: expect.stringMatching(/^matrix makes 1,600 stages/) }),
  );
  const list = `[${Array.from({ length: 600 }, (_, index) => index).join(', ')}]`;
  const two = `stages:\n  a:\n    foreach: ${list}\n    do:\n      cmd: echo \${item}\n  b:\n    foreach: ${list}\n    do:\n      cmd: echo \${item}\n`;
  const { pipeline, problems } = await load('dvc.yaml', two);
  expect(pipeline).toBeNull();
  expect(problems).toContainEqual(
    expect.objectContaining({
      path: 'stages.b',
      message: 'foreach makes 600 stages; a dvc.yaml makes at most 1,000 in all (400 left after the stages before it)',
    }),
  );
  // Up to the limit, a matrix is the stages DVC makes.
  const fine = await load('dvc.yaml', matrixOf(3, 10));
  expect(fine.problems).toEqual([]);
  expect(Object.keys(fine.pipeline?.stages ?? {})).toHaveLength(1000);
});
